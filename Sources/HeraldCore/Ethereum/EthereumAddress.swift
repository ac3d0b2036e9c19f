/// A 20-byte Ethereum account address.
///
/// Output is always EIP-55 checksummed (`description`, `Codable`). Input follows docs/protocol.md §1:
/// `0x` + 40 hex digits (all lower, all upper, or mixed case that passes EIP-55), CAIP-10
/// `eip155:<chainId>:0x…`, or the EPNS form `eip155:0x…`.
public struct EthereumAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 20 raw bytes.
    public let bytes: [UInt8]

    /// Wraps exactly 20 bytes.
    public init<Bytes: Collection>(bytes: Bytes) throws(HeraldError) where Bytes.Element == UInt8 {
        let raw = Array(bytes)
        guard raw.count == 20 else { throw HeraldError(.invalidAddress, "an address is 20 bytes") }
        self.bytes = raw
    }

    /// The address of a 65-byte uncompressed public key (`04 ‖ X ‖ Y`).
    init(uncompressedPublicKey key: [UInt8]) {
        bytes = Array(Keccak256.hash(key[1...]).suffix(20))
    }

    /// Parses any wallet input form of docs/protocol.md §1; anything else throws `invalidAddress`.
    public init(parsing text: some StringProtocol) throws(HeraldError) {
        var body = Substring(text)
        if body.hasPrefix("eip155:") {
            body = body.dropFirst("eip155:".count)
            if let colon = body.firstIndex(of: ":") {
                let chain = body[..<colon]
                guard !chain.isEmpty, chain.count <= 32, chain.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw HeraldError(.invalidAddress, "CAIP-10 chain id must be decimal digits")
                }
                body = body[body.index(after: colon)...]
            }
        }
        guard body.utf8.count == 42, body.hasPrefix("0x") else {
            throw HeraldError(.invalidAddress, "an address is 0x followed by 40 hex digits")
        }
        let digits = body.dropFirst(2)
        let raw: [UInt8]
        do { raw = try Hex.decode(digits) } catch {
            throw HeraldError(.invalidAddress, "an address is 0x followed by 40 hex digits")
        }
        self.bytes = raw
        let hasLower = digits.utf8.contains { $0 >= 0x61 && $0 <= 0x66 }
        let hasUpper = digits.utf8.contains { $0 >= 0x41 && $0 <= 0x46 }
        if hasLower && hasUpper && !Self.passesChecksum(Array(digits.utf8), bytes: raw) {
            throw HeraldError(.invalidAddress, "mixed-case address fails its EIP-55 checksum")
        }
    }

    /// Whether the case of each hex letter in `digits` (40 ASCII bytes) follows EIP-55 for `bytes`.
    private static func passesChecksum(_ digits: [UInt8], bytes: [UInt8]) -> Bool {
        let hash = Keccak256.hash(Hex.encode(bytes).utf8)
        for (index, char) in digits.enumerated() where char >= 0x41 {
            let nibble = index % 2 == 0 ? hash[index / 2] >> 4 : hash[index / 2] & 0x0f
            let isUpper = char <= 0x46
            if isUpper != (nibble >= 8) { return false }
        }
        return true
    }

    /// EIP-55: each hex letter is upper case when the matching nibble of keccak256(lowercase hex) is ≥ 8.
    public var checksummed: String {
        let lower = Array(Hex.encode(bytes).utf8)
        let hash = Keccak256.hash(lower)
        var out: [UInt8] = [0x30, 0x78]
        out.reserveCapacity(42)
        for (index, char) in lower.enumerated() {
            let nibble = index % 2 == 0 ? hash[index / 2] >> 4 : hash[index / 2] & 0x0f
            out.append(char >= 0x61 && nibble >= 8 ? char - 0x20 : char)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `0x` + 40 lowercase hex digits.
    public var lowercased: String { Hex.encode(bytes, prefix: true) }

    public var description: String { checksummed }

    public static func < (lhs: EthereumAddress, rhs: EthereumAddress) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

extension EthereumAddress: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(parsing: text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(checksummed)
    }
}
