/// Proves control of `wallet` for private reads (feeds, subscriptions). No nonce: reusable until it
/// expires. Signed by `wallet`. docs/protocol.md §2.1 and §3.
public struct FeedAccess: SignedOperation {
    public static let schema = OperationSchema(
        primaryType: "FeedAccess",
        fields: [
            .init("wallet", .address), .init("audience", .string),
            .init("issuedAt", .uint256, acceptsJSONInteger: true),
            .init("expiresAt", .uint256, acceptsJSONInteger: true),
        ])

    public var wallet: EthereumAddress
    public var audience: String
    public var issuedAt: UInt256
    public var expiresAt: UInt256

    public init(wallet: EthereumAddress, audience: String, issuedAt: UInt256, expiresAt: UInt256) {
        self.wallet = wallet
        self.audience = audience
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    public init(decoded: DecodedFields) throws(OperationRejection) {
        self.init(
            wallet: try decoded.address("wallet"), audience: try decoded.string("audience"),
            issuedAt: try decoded.uint256("issuedAt"), expiresAt: try decoded.uint256("expiresAt"))
    }

    public var fieldValues: [OperationField] {
        [.address(wallet), .string(audience), .uint256(issuedAt), .uint256(expiresAt)]
    }

    public var claimedSigner: EthereumAddress { wallet }
    public var nonce: UInt256? { nil }
}
