/// A strict RFC 8259 parser into ``JSONValue``.
///
/// Stricter than Foundation where the protocol needs it: duplicate object keys are an error,
/// numbers are kept as text, nesting is bounded (no stack exhaustion from `[[[[…`), invalid UTF-8
/// and lone surrogates are errors, and so is U+0000 (`\u0000`; a raw NUL is a control character):
/// no string Herald reads can carry it into a database (PostgreSQL's text refuses it, so it would fail
/// a request with 500 there) or a C string. Every failure is a thrown `invalidJSON`, never a crash.
public struct JSONParser {
    public static let defaultMaximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    private let maximumDepth: Int

    /// Parses one JSON value filling the whole input (whitespace aside).
    public static func parse<Bytes: Collection>(
        _ input: Bytes, maximumDepth: Int = defaultMaximumDepth
    )
        throws(HeraldError) -> JSONValue where Bytes.Element == UInt8
    {
        var parser = JSONParser(bytes: Array(input), maximumDepth: maximumDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    /// Parses UTF-8 text.
    public static func parse(_ text: String, maximumDepth: Int = defaultMaximumDepth) throws(HeraldError) -> JSONValue {
        try parse(Array(text.utf8), maximumDepth: maximumDepth)
    }

    private init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private func failure(_ reason: String) -> HeraldError {
        HeraldError(.invalidJSON, "invalid JSON at byte \(index): \(reason)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count,
            bytes[index] == 0x20 || bytes[index] == 0x0a || bytes[index] == 0x0d || bytes[index] == 0x09
        {
            index += 1
        }
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func parseValue(depth: Int) throws(HeraldError) -> JSONValue {
        guard let byte = current else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(HeraldError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw failure("unexpected end of input") }
        let matches = literal.withUTF8Buffer { expected in
            expected.indices.allSatisfy { expected[$0] == bytes[index + $0] }
        }
        guard matches else { throw failure("unknown literal") }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(HeraldError) -> JSONValue {
        guard depth <= maximumDepth else { throw failure("nesting deeper than \(maximumDepth)") }
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        // Small objects (every protocol message) check duplicates by scanning; a set only past 16 keys.
        var seen: Set<String>? = nil
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try parseString()
            let duplicate: Bool
            if members.count < 16 {
                duplicate = members.contains { $0.key == key }
            } else {
                if seen == nil { seen = Set(members.map(\.key)) }
                duplicate = !(seen?.insert(key).inserted ?? true)
            }
            guard !duplicate else { throw failure("duplicate key \"\(key.prefix(64))\"") }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue(depth: depth)))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(HeraldError) -> JSONValue {
        guard depth <= maximumDepth else { throw failure("nesting deeper than \(maximumDepth)") }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(items)
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws(HeraldError) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, first >= 0x30, first <= 0x39 else { throw failure("a number needs digits") }
        if first == 0x30 {
            index += 1
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard try skipAtLeastOneDigit() else { throw failure("a fraction needs digits") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard try skipAtLeastOneDigit() else { throw failure("an exponent needs digits") }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func skipDigits() {
        while let byte = current, byte >= 0x30, byte <= 0x39 { index += 1 }
    }

    private mutating func skipAtLeastOneDigit() throws(HeraldError) -> Bool {
        let start = index
        skipDigits()
        return index > start
    }

    private mutating func parseString() throws(HeraldError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes. Validate UTF-8 and control characters, then copy once.
        var ascii = true
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw failure("control character in string") }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        guard let stop = current else { throw failure("unterminated string") }
        if stop == UInt8(ascii: "\"") {
            // ASCII needs no validation: String(decoding:) copies contiguous bytes directly, where
            // String(validating:) took a generic path (runtime metadata lookups) for every string.
            let text =
                ascii ? String(decoding: bytes[start..<index], as: UTF8.self) : try decodeUTF8(bytes[start..<index])
            index += 1
            return text
        }
        // Escapes: the string's UTF-8 gathered in one buffer and validated once at the end (an escape
        // writes whole scalars, so a run's broken sequence stays broken in the whole). Appending to a
        // String's scalar view copied the string so far at every escape: a 50 KB payload with a
        // thousand escapes cost 50 MB of copying.
        var utf8: [UInt8] = []
        utf8.reserveCapacity(index - start + 64)
        utf8.append(contentsOf: bytes[start..<index])
        while true {
            guard let byte = current else { throw failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try decodeUTF8(utf8[...])
            case UInt8(ascii: "\\"):
                index += 1
                Unicode.UTF8.encode(try parseEscape()) { utf8.append($0) }
            default:
                let runStart = index
                while let b = current, b != UInt8(ascii: "\""), b != UInt8(ascii: "\\") {
                    guard b >= 0x20 else { throw failure("control character in string") }
                    index += 1
                }
                utf8.append(contentsOf: bytes[runStart..<index])
            }
        }
    }

    private func decodeUTF8(_ slice: ArraySlice<UInt8>) throws(HeraldError) -> String {
        guard let text = String(validating: slice, as: UTF8.self) else { throw failure("invalid UTF-8") }
        return text
    }

    private mutating func parseEscape() throws(HeraldError) -> Unicode.Scalar {
        guard let byte = current else { throw failure("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try parseHex4()
            if (0xD800...0xDBFF).contains(high) {
                guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw failure("lone surrogate")
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw failure("lone surrogate") }
                let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                guard let scalar = Unicode.Scalar(value) else { throw failure("invalid escape") }
                return scalar
            }
            guard high != 0 else { throw failure("\\u0000 (U+0000, NUL) is not accepted in a string") }
            guard let scalar = Unicode.Scalar(high) else { throw failure("lone surrogate") }
            return scalar
        default:
            throw failure("invalid escape")
        }
    }

    private mutating func parseHex4() throws(HeraldError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let nibble = Hex.nibble(bytes[index]) else { throw failure("bad \\u escape") }
            value = value << 4 | UInt32(nibble)
            index += 1
        }
        return value
    }
}
