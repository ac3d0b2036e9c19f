import HeraldCore
import Testing

/// The string writer scans eight bytes at a time: every escape must still be found wherever it falls in
/// a word, and nothing else may be escaped.
@Suite struct JSONWriterTests {
    /// RFC 8259's rules one scalar at a time: what the fast writer must produce.
    static func reference(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u00" + (hex.count == 1 ? "0" + hex : hex)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    @Test func anEscapeAtEveryPositionOfALongStringIsWrittenAsTheReferenceDoes() throws {
        let specials: [Character] = ["\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1f}", "\u{8}"]
        let plain = "The quick brown fox jumps over the lazy dog 0123456789"
        for special in specials {
            for position in 0...plain.count {
                var text = plain
                text.insert(special, at: text.index(text.startIndex, offsetBy: position))
                let written = JSONValue.string(text).jsonText
                #expect(written == Self.reference(text), "\(special.debugDescription) at \(position)")
                // The parser refuses NUL in any form (it is never in a signed field), so NUL is only written.
                if special != "\u{0}" { #expect(try JSONParser.parse(written) == .string(text)) }
            }
        }
    }

    @Test func boundaryBytesAndUTF8PassUnescaped() throws {
        // A space (0x20) and DEL (0x7f) need no escape, nor any byte of a UTF-8 sequence (0x80 and up,
        // which a word test must not mistake for one below 0x20).
        for text in [
            String(repeating: " ", count: 17), String(repeating: "\u{7f}", count: 9), "héllo wörld ✓ 🚀 ÿÿÿÿÿÿÿÿ",
            String(repeating: "\u{a0}", count: 16), "", "a", "abcdefg", "abcdefgh", "abcdefghi",
        ] {
            let written = JSONValue.string(text).jsonText
            #expect(written == "\"" + text + "\"")
            #expect(try JSONParser.parse(written) == .string(text))
        }
    }

    @Test func randomTextRoundTripsAndMatchesTheReference() throws {
        var rng = SplitMix64(seed: 0x4a53_4f4e)
        let alphabet: [Character] = ["a", "Z", " ", "\"", "\\", "/", "\n", "\u{1}", "\u{7f}", "é", "✓", "🚀", "\u{1e}"]
        for _ in 0..<2000 {
            let length = Int.random(in: 0...40, using: &rng)
            let text = String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] })
            let written = JSONValue.string(text).jsonText
            #expect(written == Self.reference(text))
            #expect(try JSONParser.parse(written) == .string(text))
        }
    }
}
