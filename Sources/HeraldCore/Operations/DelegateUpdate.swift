/// A channel adds or removes a delegate: a key that may sign the channel's Notifications and nothing
/// else (docs/protocol.md §11.1). Signed by `channel`; `delegate` equal to `channel` is `bad_request`.
public struct DelegateUpdate: SignedOperation {
    public enum Action: String, Sendable, Hashable, CaseIterable {
        case add, remove
    }

    public static let schema = OperationSchema(
        primaryType: "Delegate",
        fields: [
            .init("action", .string), .init("channel", .address), .init("delegate", .address),
            .init("audience", .string), .init("nonce", .uint256),
            .init("issuedAt", .uint256, acceptsJSONInteger: true),
            .init("expiresAt", .uint256, acceptsJSONInteger: true),
        ])

    public var action: Action
    public var channel: EthereumAddress
    public var delegate: EthereumAddress
    public var audience: String
    public var nonceValue: UInt256
    public var issuedAt: UInt256
    public var expiresAt: UInt256

    public init(
        action: Action, channel: EthereumAddress, delegate: EthereumAddress, audience: String, nonce: UInt256,
        issuedAt: UInt256, expiresAt: UInt256
    ) throws(OperationRejection) {
        guard delegate != channel else {
            throw OperationRejection(.badRequest, "a channel cannot be its own delegate")
        }
        self.action = action
        self.channel = channel
        self.delegate = delegate
        self.audience = audience
        self.nonceValue = nonce
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    public init(decoded: DecodedFields) throws(OperationRejection) {
        guard let action = Action(rawValue: try decoded.string("action")) else {
            throw OperationRejection(.badRequest, "action must be \"add\" or \"remove\"")
        }
        try self.init(
            action: action, channel: try decoded.address("channel"), delegate: try decoded.address("delegate"),
            audience: try decoded.string("audience"), nonce: try decoded.uint256("nonce"),
            issuedAt: try decoded.uint256("issuedAt"), expiresAt: try decoded.uint256("expiresAt"))
    }

    public var fieldValues: [OperationField] {
        [
            .string(action.rawValue), .address(channel), .address(delegate), .string(audience),
            .uint256(nonceValue), .uint256(issuedAt), .uint256(expiresAt),
        ]
    }

    public var claimedSigner: EthereumAddress { channel }
    public var nonce: UInt256? { nonceValue }
}
