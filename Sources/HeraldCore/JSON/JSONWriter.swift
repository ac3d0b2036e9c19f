/// Compact JSON text of a ``JSONValue``, members in their stored order, written as UTF-8 bytes
/// (one buffer, escaping only what RFC 8259 requires).
extension JSONValue {
    public var jsonText: String { String(decoding: jsonBytes, as: UTF8.self) }

    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out)
        return out
    }

    /// Appends this value's compact JSON to `out`, for a writer that assembles a document around it.
    public func appendJSON(to out: inout [UInt8]) { write(to: &out) }

    /// Appends `text` as a JSON string (quoted, escaped as RFC 8259 requires).
    public static func appendJSONString(_ text: String, to out: inout [UInt8]) { writeString(text, to: &out) }

    private func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: value ? "true".utf8 : "false".utf8)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let text): JSONValue.writeString(text, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func writeString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            let count = bytes.count
            var runStart = 0
            var index = 0
            while index < count {
                // Eight bytes at a time while none needs escaping: a push body's strings are mostly plain
                // text, and a byte-by-byte loop over them was a tenth of the instructions of a push.
                if index &+ 8 <= count {
                    let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                    if !Self.anyByteNeedsEscaping(word) {
                        index &+= 8
                        continue
                    }
                }
                let byte = base[index]
                index &+= 1
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                out.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: index &- 1 &- runStart))
                runStart = index
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
                case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
                case UInt8(ascii: "\n"): out.append(contentsOf: "\\n".utf8)
                case UInt8(ascii: "\r"): out.append(contentsOf: "\\r".utf8)
                case UInt8(ascii: "\t"): out.append(contentsOf: "\\t".utf8)
                default:
                    out.append(contentsOf: "\\u00".utf8)
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 0x0f)])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: count &- runStart))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether one of the eight bytes is a control character, `"` or `\\` (the bytes RFC 8259 requires
    /// escaped). Each test flags a byte's high bit only from that byte or from a borrow that a flagged
    /// lower byte started, so "any" is exact; bytes of 0x80 and above (UTF-8 sequences) pass.
    static func anyByteNeedsEscaping(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let belowSpace = (word &- ones &* 0x20) & ~word & highBits
        let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let quoteFound = (quotes &- ones) & ~quotes & highBits
        let backslashFound = (backslashes &- ones) & ~backslashes & highBits
        return belowSpace | quoteFound | backslashFound != 0
    }
}
