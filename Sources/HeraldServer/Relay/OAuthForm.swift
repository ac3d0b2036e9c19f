/// An `application/x-www-form-urlencoded` body (the OAuth2 token request, RFC 6749 §4.4): `+` is a
/// space and `%XX` a byte. A name given twice, or an escape that is not two hex digits, makes the
/// whole body malformed (RFC 6749 §3.2: parameters must not be repeated).
struct OAuthForm {
    let fields: [String: String]

    init?(_ bytes: some Collection<UInt8>) {
        var fields: [String: String] = [:]
        for pair in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), fields[name] == nil else { return nil }
            let value = parts.count > 1 ? Self.decode(parts[1]) : ""
            guard let value else { return nil }
            fields[name] = value
        }
        self.fields = fields
    }

    subscript(name: String) -> String? { fields[name] }

    private static func decode(_ bytes: some Collection<UInt8>) -> String? {
        var decoded: [UInt8] = []
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                let first = bytes.index(after: index)
                guard first != bytes.endIndex else { return nil }
                let second = bytes.index(after: first)
                guard second != bytes.endIndex, let high = hexValue(bytes[first]), let low = hexValue(bytes[second])
                else { return nil }
                decoded.append(high << 4 | low)
                index = bytes.index(after: second)
                continue
            }
            decoded.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index = bytes.index(after: index)
        }
        return String(validating: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
