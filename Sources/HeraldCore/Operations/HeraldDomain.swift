/// The EIP-712 domain of docs/protocol.md §2.1: `EIP712Domain(string name,string version,uint256 chainId)`
/// with name "Herald", version "1" and the server's chain id. The separator is computed once.
public struct HeraldDomain: Sendable, Hashable {
    public static let name = "Herald"
    public static let version = "1"
    static let encodeType = "EIP712Domain(string name,string version,uint256 chainId)"

    public let chainId: UInt256
    /// hashStruct(EIP712Domain, domain).
    public let separator: [UInt8]

    public init(chainId: UInt256) {
        self.chainId = chainId
        var hasher = Keccak256()
        hasher.update(Keccak256.hash(HeraldDomain.encodeType.utf8))
        hasher.update(Keccak256.hash(HeraldDomain.name.utf8))
        hasher.update(Keccak256.hash(HeraldDomain.version.utf8))
        hasher.update(chainId.bigEndianBytes)
        separator = hasher.finalize()
    }

    public init(chainId: UInt64) { self.init(chainId: UInt256(chainId)) }

    /// The domain as typed-data JSON (`chainId` as a JSON integer, as wallets send it).
    public var json: JSONValue {
        .object([
            ("name", .string(HeraldDomain.name)),
            ("version", .string(HeraldDomain.version)),
            ("chainId", .number(chainId.description)),
        ])
    }

    static let typedDataFields = [
        TypedData.Field(name: "name", type: "string"),
        TypedData.Field(name: "version", type: "string"),
        TypedData.Field(name: "chainId", type: "uint256"),
    ]
}
