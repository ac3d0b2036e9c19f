/// The integers of docs/protocol.md §10 (a threshold's bounds, a choice, a notification's `value`): a JSON
/// number without fraction or exponent whose magnitude is at most 2^53, so that every JavaScript client
/// reads it exactly.
enum SettingInteger {
    static let magnitudeLimit: Int64 = 1 << 53

    /// The value of `json` when it is such an integer; nil otherwise (a string, `1.0`, `1e3`, `2^53 + 1`).
    static func parse(_ json: JSONValue) -> Int64? {
        guard case .number(let text) = json else { return nil }
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        // The parser already checked the JSON grammar; what is left to refuse is a fraction or an exponent.
        guard !digits.isEmpty, digits.utf8.count <= 16, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let magnitude = Int64(digits), magnitude <= magnitudeLimit
        else { return nil }
        return text.hasPrefix("-") ? -magnitude : magnitude
    }
}
