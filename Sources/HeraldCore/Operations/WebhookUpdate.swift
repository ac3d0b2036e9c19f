/// A channel sets, replaces or removes its webhook (docs/protocol.md §11.3). Signed by `channel`. `url` ""
/// removes it (and `events` is then not checked). The URL's network rules need the server's
/// `webhooks.allowNetworks` and are checked by ``target(policy:)``; the form of `events` is checked here.
public struct WebhookUpdate: SignedOperation {
    public static let schema = OperationSchema(
        primaryType: "Webhook",
        fields: [
            .init("channel", .address), .init("url", .string), .init("events", .string),
            .init("audience", .string), .init("nonce", .uint256),
            .init("issuedAt", .uint256, acceptsJSONInteger: true),
            .init("expiresAt", .uint256, acceptsJSONInteger: true),
        ])

    public var channel: EthereumAddress
    public var url: String
    public var events: String
    public var audience: String
    public var nonceValue: UInt256
    public var issuedAt: UInt256
    public var expiresAt: UInt256
    /// The parsed `events`; empty for a removal.
    public let eventSet: WebhookEventSet

    public init(
        channel: EthereumAddress, url: String, events: String, audience: String, nonce: UInt256, issuedAt: UInt256,
        expiresAt: UInt256
    ) throws(OperationRejection) {
        if !url.isEmpty {
            // The URL's form here (step 1); its networks once the server's policy is known.
            _ = try WebhookTarget.validate(url, policy: nil)
        }
        eventSet = url.isEmpty ? WebhookEventSet([]) : try WebhookEventSet.parse(events)
        self.channel = channel
        self.url = url
        self.events = events
        self.audience = audience
        self.nonceValue = nonce
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    public init(decoded: DecodedFields) throws(OperationRejection) {
        try self.init(
            channel: try decoded.address("channel"), url: try decoded.string("url"),
            events: try decoded.string("events"), audience: try decoded.string("audience"),
            nonce: try decoded.uint256("nonce"), issuedAt: try decoded.uint256("issuedAt"),
            expiresAt: try decoded.uint256("expiresAt"))
    }

    public var fieldValues: [OperationField] {
        [
            .address(channel), .string(url), .string(events), .string(audience), .uint256(nonceValue),
            .uint256(issuedAt), .uint256(expiresAt),
        ]
    }

    public var claimedSigner: EthereumAddress { channel }
    public var nonce: UInt256? { nonceValue }

    public var isRemoval: Bool { url.isEmpty }

    /// The URL checked against the server's networks (`invalid_webhook`); nil for a removal.
    public func target(policy: WebPushNetworkPolicy) throws(OperationRejection) -> WebPushEndpoint? {
        isRemoval ? nil : try WebhookTarget.validate(url, policy: policy)
    }
}
