/// Subscribes (or unsubscribes) `subscriber` to a channel. Signed by `subscriber`. docs/protocol.md §2.1.
public struct Subscription: SignedOperation {
    public enum Action: String, Sendable, Hashable, CaseIterable {
        case subscribe, unsubscribe
    }

    public static let schema = OperationSchema(
        primaryType: "Subscription",
        fields: [
            .init("action", .string), .init("channel", .address), .init("subscriber", .address),
            .init("audience", .string), .init("nonce", .uint256),
            .init("issuedAt", .uint256, acceptsJSONInteger: true),
            .init("expiresAt", .uint256, acceptsJSONInteger: true),
        ])

    public var action: Action
    public var channel: EthereumAddress
    public var subscriber: EthereumAddress
    public var audience: String
    public var nonceValue: UInt256
    public var issuedAt: UInt256
    public var expiresAt: UInt256

    public init(
        action: Action, channel: EthereumAddress, subscriber: EthereumAddress, audience: String,
        nonce: UInt256, issuedAt: UInt256, expiresAt: UInt256
    ) {
        self.action = action
        self.channel = channel
        self.subscriber = subscriber
        self.audience = audience
        self.nonceValue = nonce
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    public init(decoded: DecodedFields) throws(OperationRejection) {
        guard let action = Action(rawValue: try decoded.string("action")) else {
            throw OperationRejection(.badRequest, "action must be \"subscribe\" or \"unsubscribe\"")
        }
        self.init(
            action: action, channel: try decoded.address("channel"), subscriber: try decoded.address("subscriber"),
            audience: try decoded.string("audience"), nonce: try decoded.uint256("nonce"),
            issuedAt: try decoded.uint256("issuedAt"), expiresAt: try decoded.uint256("expiresAt"))
    }

    public var fieldValues: [OperationField] {
        [
            .string(action.rawValue), .address(channel), .address(subscriber), .string(audience),
            .uint256(nonceValue), .uint256(issuedAt), .uint256(expiresAt),
        ]
    }

    public var claimedSigner: EthereumAddress { subscriber }
    public var nonce: UInt256? { nonceValue }
}
