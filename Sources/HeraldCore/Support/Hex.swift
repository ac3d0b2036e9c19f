/// Hexadecimal coding. Output is lowercase; input accepts either case and an optional `0x`/`0X` prefix.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`, with `0x` in front when `prefix` is true.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes, prefix: Bool = false) -> String
    where Bytes.Element == UInt8 {
        var out: [UInt8] = prefix ? [0x30, 0x78] : []
        out.reserveCapacity(out.count + bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex with or without a `0x` prefix. Odd length or a non-hex character throws `invalidHex`.
    public static func decode(_ text: some StringProtocol) throws(HeraldError) -> [UInt8] {
        // On the contiguous UTF-8 bytes: a signature's 130 digits cost a tenth of what iterating a
        // Substring's UTF-8 view did, and every request decodes a signature, a token and an address.
        var string = String(text)
        return try string.withUTF8 { decode(bytes: $0) }.get()
    }

    private static func decode(bytes: UnsafeBufferPointer<UInt8>) -> Result<[UInt8], HeraldError> {
        var digits = bytes[...]
        if digits.count >= 2, digits[digits.startIndex] == 0x30,
            digits[digits.startIndex + 1] == 0x78 || digits[digits.startIndex + 1] == 0x58
        {
            digits = digits.dropFirst(2)
        }
        guard digits.count % 2 == 0 else {
            return .failure(HeraldError(.invalidHex, "hex string has an odd number of digits"))
        }
        var out = [UInt8]()
        out.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else {
                return .failure(HeraldError(.invalidHex, "not a hex digit"))
            }
            out.append(high << 4 | low)
            index += 2
        }
        return .success(out)
    }

    /// Decodes hex that must be exactly `count` bytes long.
    public static func decode(_ text: some StringProtocol, count: Int) throws(HeraldError) -> [UInt8] {
        let bytes = try decode(text)
        guard bytes.count == count else {
            throw HeraldError(.invalidHex, "expected \(count) bytes of hex, got \(bytes.count)")
        }
        return bytes
    }

    /// The value of one hex digit, or nil.
    public static func nibbleValue(_ char: UInt8) -> UInt8? { nibble(char) }

    static func nibble(_ char: UInt8) -> UInt8? {
        switch char {
        case 0x30...0x39: return char - 0x30
        case 0x61...0x66: return char - 0x61 + 10
        case 0x41...0x46: return char - 0x41 + 10
        default: return nil
        }
    }
}
