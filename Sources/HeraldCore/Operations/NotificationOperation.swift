/// A channel's signed notification; `payload` is the exact JSON text of docs/protocol.md §4.1, signed as a
/// string. Signed by `channel` or by one of its delegates (§11.1).
public struct NotificationOperation: SignedOperation {
    public static let schema = OperationSchema(
        primaryType: "Notification",
        fields: [
            .init("channel", .address), .init("payload", .string), .init("audience", .string),
            .init("nonce", .uint256), .init("issuedAt", .uint256, acceptsJSONInteger: true),
            .init("expiresAt", .uint256, acceptsJSONInteger: true),
        ])

    public var channel: EthereumAddress
    public var payload: String
    public var audience: String
    public var nonceValue: UInt256
    public var issuedAt: UInt256
    public var expiresAt: UInt256

    public init(
        channel: EthereumAddress, payload: String, audience: String, nonce: UInt256, issuedAt: UInt256,
        expiresAt: UInt256
    ) {
        self.channel = channel
        self.payload = payload
        self.audience = audience
        self.nonceValue = nonce
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    public init(decoded: DecodedFields) throws(OperationRejection) {
        self.init(
            channel: try decoded.address("channel"), payload: try decoded.string("payload"),
            audience: try decoded.string("audience"), nonce: try decoded.uint256("nonce"),
            issuedAt: try decoded.uint256("issuedAt"), expiresAt: try decoded.uint256("expiresAt"))
    }

    public var fieldValues: [OperationField] {
        [
            .address(channel), .string(payload), .string(audience), .uint256(nonceValue), .uint256(issuedAt),
            .uint256(expiresAt),
        ]
    }

    public var claimedSigner: EthereumAddress { channel }
    public var nonce: UInt256? { nonceValue }
    public static var acceptsDelegates: Bool { true }
}
