/// Spaces, tabs and carriage returns trimmed from both ends (header values, list items, settings).
extension String {
    var trimmed: String {
        // On the UTF-8 bytes: the blanks are ASCII, so both cut points fall on scalar boundaries. (The
        // version on Characters reversed the string twice with grapheme breaking, on every request.)
        let isBlank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0D }
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { !isBlank($0) }),
            let last = bytes.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return String(self[first..<bytes.index(after: last)])
    }
}
