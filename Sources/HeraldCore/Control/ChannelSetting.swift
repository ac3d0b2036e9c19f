/// One entry of a channel's settings list (docs/protocol.md §10): what its subscribers may choose.
///
/// ```
/// {"id":"<[a-z0-9_-]{1,32}>","kind":"toggle","default":true|false,"description":"<at most 80>"}
/// {"id":"<…>","kind":"threshold","min":<int>,"max":<int>,"default":<int>,"description":"<at most 80>"}
/// ```
public struct ChannelSetting: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case toggle(default: Bool)
        /// `min < max`, `min ≤ default ≤ max`.
        case threshold(min: Int64, max: Int64, default: Int64)
    }

    public let id: String
    public let kind: Kind
    public let description: String

    public static let maximumCount = 16
    public static let maximumDescriptionLength = 80
    public static let maximumIDLength = 32

    public init(id: String, kind: Kind, description: String = "") {
        self.id = id
        self.kind = kind
        self.description = description
    }

    /// The default as stored: a toggle's `true` is 1, `false` 0 (docs/architecture.md: choices are integers).
    public var defaultValue: Int64 {
        switch kind {
        case .toggle(let value): return value ? 1 : 0
        case .threshold(_, _, let value): return value
        }
    }

    /// The values a choice of this setting may hold: a toggle's 0 and 1, a threshold's [min, max].
    public var allowedValues: ClosedRange<Int64> {
        switch kind {
        case .toggle: return 0...1
        case .threshold(let min, let max, _): return min...max
        }
    }

    public var isToggle: Bool {
        if case .toggle = kind { return true }
        return false
    }

    /// A stored value as the answers show it: a toggle's as a JSON boolean, a threshold's as a number.
    public func json(value: Int64) -> JSONValue {
        isToggle ? .bool(value != 0) : .number(String(value))
    }

    /// The entry as every answer shows it: each key of its kind, in the order of §10.
    public var json: JSONValue {
        switch kind {
        case .toggle(let value):
            return .object([
                ("id", .string(id)), ("kind", .string("toggle")), ("default", .bool(value)),
                ("description", .string(description)),
            ])
        case .threshold(let min, let max, let value):
            return .object([
                ("id", .string(id)), ("kind", .string("threshold")), ("min", .number(String(min))),
                ("max", .number(String(max))), ("default", .number(String(value))),
                ("description", .string(description)),
            ])
        }
    }

    /// Whether a choice made under `old` survives the list being replaced by one holding `self` (same id):
    /// the same kind and, for a threshold, a value still within the new range (§10).
    public func keepsChoices(madeUnder old: ChannelSetting) -> Bool {
        switch (old.kind, kind) {
        case (.toggle, .toggle), (.threshold, .threshold): return true
        default: return false
        }
    }
}

/// A channel's whole list of settings, parsed from the exact JSON text a ChannelSettings signs.
public struct ChannelSettingsList: Sendable, Hashable {
    public let settings: [ChannelSetting]

    public init(_ settings: [ChannelSetting]) { self.settings = settings }

    public static let empty = ChannelSettingsList([])

    public subscript(id: String) -> ChannelSetting? { settings.first { $0.id == id } }

    /// The list as every answer (and the database) holds it: compact JSON, keys in §10's order.
    public var json: JSONValue { .array(settings.map(\.json)) }

    public var jsonText: String { json.jsonText }

    /// Parses and checks the text completely (docs/protocol.md §10); any fault is `invalid_settings`.
    public static func parse(_ text: String) throws(OperationRejection) -> ChannelSettingsList {
        let json: JSONValue
        do { json = try JSONParser.parse(text) } catch {
            throw invalid("settings is not JSON: \(error.reason)")
        }
        guard case .array(let entries) = json else { throw invalid("settings must be a JSON array") }
        guard entries.count <= ChannelSetting.maximumCount else {
            throw invalid("at most \(ChannelSetting.maximumCount) settings")
        }
        var settings: [ChannelSetting] = []
        var seen = Set<String>()
        for (position, entry) in entries.enumerated() {
            let setting = try parseEntry(entry, position: position)
            guard seen.insert(setting.id).inserted else { throw invalid("setting \"\(setting.id)\" is listed twice") }
            settings.append(setting)
        }
        return ChannelSettingsList(settings)
    }

    /// A list read back from storage, where only lists that passed ``parse(_:)`` are written.
    public static func stored(_ text: String) throws(OperationRejection) -> ChannelSettingsList {
        text.isEmpty ? .empty : try parse(text)
    }

    private static func parseEntry(_ entry: JSONValue, position: Int) throws(OperationRejection) -> ChannelSetting {
        guard let members = entry.objectMembers else { throw invalid("settings[\(position)] must be an object") }
        guard let id = entry["id"]?.stringValue, isValidID(id) else {
            throw invalid("settings[\(position)].id must be 1 to 32 of [a-z0-9_-]")
        }
        let description: String
        switch entry["description"] {
        case nil: description = ""
        case .string(let text)?:
            guard text.unicodeScalars.count <= ChannelSetting.maximumDescriptionLength else {
                throw invalid("setting \"\(id)\": description is longer than 80 characters")
            }
            description = text
        default: throw invalid("setting \"\(id)\": description must be a string")
        }
        let allowed: Set<String>
        let kind: ChannelSetting.Kind
        switch entry["kind"]?.stringValue {
        case "toggle":
            allowed = ["id", "kind", "default", "description"]
            guard case .bool(let value)? = entry["default"] else {
                throw invalid("toggle \"\(id)\": default must be true or false")
            }
            kind = .toggle(default: value)
        case "threshold":
            allowed = ["id", "kind", "min", "max", "default", "description"]
            guard let min = entry["min"].flatMap(SettingInteger.parse),
                let max = entry["max"].flatMap(SettingInteger.parse),
                let value = entry["default"].flatMap(SettingInteger.parse)
            else {
                throw invalid("threshold \"\(id)\": min, max and default must be integers of at most 2^53")
            }
            guard min < max, min <= value, value <= max else {
                throw invalid("threshold \"\(id)\": needs min < max and min ≤ default ≤ max")
            }
            kind = .threshold(min: min, max: max, default: value)
        default:
            throw invalid("setting \"\(id)\": kind must be \"toggle\" or \"threshold\"")
        }
        if let unknown = members.first(where: { !allowed.contains($0.key) }) {
            throw invalid("setting \"\(id)\" has an unknown key \"\(unknown.key.prefix(32))\"")
        }
        return ChannelSetting(id: id, kind: kind, description: description)
    }

    static func isValidID(_ id: String) -> Bool {
        let bytes = id.utf8
        return !bytes.isEmpty && bytes.count <= ChannelSetting.maximumIDLength
            && bytes.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2D }
    }

    private static func invalid(_ message: String) -> OperationRejection {
        OperationRejection(.invalidSettings, message)
    }
}
