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

    /// `+` is a space in a form (before percent-decoding, so that `%2B` stays a plus); the rest is the
    /// percent-decoding path segments use. A decoded U+0000 (`%00`) makes the body malformed: the
    /// client id is looked up in the database, which refuses it (PostgreSQL) with a 500.
    private static func decode(_ bytes: some Collection<UInt8>) -> String? {
        let spaced = bytes.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }
        guard let decoded = String(validating: spaced, as: UTF8.self)?.removingPercentEncoding,
            !decoded.unicodeScalars.contains("\0")
        else { return nil }
        return decoded
    }
}
