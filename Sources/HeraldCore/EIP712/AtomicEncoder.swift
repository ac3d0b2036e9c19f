/// EIP-712 `encodeData` of the atomic and dynamic types: each value becomes one 32-byte word.
enum AtomicEncoder {
    static func isAtomic(_ type: String) -> Bool {
        switch type {
        case "address", "bool", "string", "bytes": return true
        default: return fixedBytesLength(type) != nil || integerWidth(type) != nil
        }
    }

    static func encode(type: String, value: JSONValue) throws(HeraldError) -> [UInt8] {
        switch type {
        case "address":
            guard let text = value.stringValue else { throw mismatch(type) }
            return [UInt8](repeating: 0, count: 12) + (try EthereumAddress(parsing: text)).bytes
        case "bool":
            guard case .bool(let flag) = value else { throw mismatch(type) }
            return UInt256(flag ? 1 : 0).bigEndianBytes
        case "string":
            guard let text = value.stringValue else { throw mismatch(type) }
            return Keccak256.hash(text.utf8)
        case "bytes":
            return Keccak256.hash(try hexBytes(value, type: type))
        default:
            if let length = fixedBytesLength(type) {
                let bytes = try hexBytes(value, type: type)
                guard bytes.count <= length else {
                    throw HeraldError(.invalidTypedData, "\(type) holds at most \(length) bytes")
                }
                return bytes + [UInt8](repeating: 0, count: 32 - bytes.count)
            }
            if let (signed, width) = integerWidth(type) {
                return try encodeInteger(value, signed: signed, width: width, type: type)
            }
            throw HeraldError(.invalidTypedData, "unknown type \(type.prefix(64))")
        }
    }

    /// `bytesN` → N, for 1 ≤ N ≤ 32.
    static func fixedBytesLength(_ type: String) -> Int? {
        guard type.hasPrefix("bytes"), let length = Int(type.dropFirst(5)), (1...32).contains(length),
            type.dropFirst(5).first != "0"
        else { return nil }
        return length
    }

    /// `uintN`/`intN` → (signed, N), N a multiple of 8 in 8…256. Bare `uint`/`int` mean 256.
    static func integerWidth(_ type: String) -> (Bool, Int)? {
        let signed = type.hasPrefix("int")
        guard signed || type.hasPrefix("uint") else { return nil }
        let digits = type.dropFirst(signed ? 3 : 4)
        if digits.isEmpty { return (signed, 256) }
        guard digits.first != "0", let width = Int(digits), width % 8 == 0, (8...256).contains(width) else {
            return nil
        }
        return (signed, width)
    }

    private static func encodeInteger(
        _ value: JSONValue, signed: Bool, width: Int, type: String
    ) throws(HeraldError) -> [UInt8] {
        let text: String
        switch value {
        case .number(let raw): text = raw
        case .string(let raw): text = raw
        default: throw mismatch(type)
        }
        let negative = text.hasPrefix("-")
        let magnitudeText = negative ? text.dropFirst() : Substring(text)
        guard let magnitude = UInt256(hex: magnitudeText) ?? UInt256(decimal: magnitudeText) else {
            throw HeraldError(.invalidTypedData, "\(type) needs an integer")
        }
        if !signed {
            guard !negative || magnitude == .zero else {
                throw HeraldError(.invalidTypedData, "\(type) cannot be negative")
            }
            guard magnitude.bitWidth <= width else {
                throw HeraldError(.invalidTypedData, "value out of range for \(type)")
            }
            return magnitude.bigEndianBytes
        }
        // intN holds -2^(N-1) ... 2^(N-1) - 1.
        let fits =
            negative
            ? magnitude.bitWidth < width || (magnitude.bitWidth == width && magnitude.isPowerOfTwo)
            : magnitude.bitWidth < width
        guard fits else { throw HeraldError(.invalidTypedData, "value out of range for \(type)") }
        return (negative ? magnitude.twosComplement : magnitude).bigEndianBytes
    }

    private static func hexBytes(_ value: JSONValue, type: String) throws(HeraldError) -> [UInt8] {
        guard let text = value.stringValue, text.hasPrefix("0x") || text.hasPrefix("0X") else {
            throw HeraldError(.invalidTypedData, "\(type) needs 0x-prefixed hex")
        }
        do { return try Hex.decode(text) } catch {
            throw HeraldError(.invalidTypedData, "\(type) needs 0x-prefixed hex")
        }
    }

    private static func mismatch(_ type: String) -> HeraldError {
        HeraldError(.invalidTypedData, "value does not fit type \(type.prefix(64))")
    }
}

extension UInt256 {
    var isPowerOfTwo: Bool {
        let bytes = bigEndianBytes
        return bytes.reduce(0) { $0 + $1.nonzeroBitCount } == 1
    }
}
