/// A subscriber's choices among a channel's settings (docs/protocol.md §10): `settings` is the exact JSON
/// text of an object of choices, checked as an object in step 1 and against the channel's list in the
/// operation's transaction. Signed by `subscriber`.
public struct SubscriberSettingsUpdate: SignedOperation {
    public static let schema = OperationSchema(
        primaryType: "SubscriberSettings",
        fields: [
            .init("channel", .address), .init("subscriber", .address), .init("settings", .string),
            .init("audience", .string), .init("nonce", .uint256),
            .init("issuedAt", .uint256, acceptsJSONInteger: true),
            .init("expiresAt", .uint256, acceptsJSONInteger: true),
        ])

    public var channel: EthereumAddress
    public var subscriber: EthereumAddress
    public var settings: String
    public var audience: String
    public var nonceValue: UInt256
    public var issuedAt: UInt256
    public var expiresAt: UInt256
    public let choices: SettingChoices

    public init(
        channel: EthereumAddress, subscriber: EthereumAddress, settings: String, audience: String, nonce: UInt256,
        issuedAt: UInt256, expiresAt: UInt256
    ) throws(OperationRejection) {
        self.channel = channel
        self.subscriber = subscriber
        self.settings = settings
        self.audience = audience
        self.nonceValue = nonce
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        choices = try SettingChoices.parse(settings)
    }

    public init(decoded: DecodedFields) throws(OperationRejection) {
        try self.init(
            channel: try decoded.address("channel"), subscriber: try decoded.address("subscriber"),
            settings: try decoded.string("settings"), audience: try decoded.string("audience"),
            nonce: try decoded.uint256("nonce"), issuedAt: try decoded.uint256("issuedAt"),
            expiresAt: try decoded.uint256("expiresAt"))
    }

    public var fieldValues: [OperationField] {
        [
            .address(channel), .address(subscriber), .string(settings), .string(audience), .uint256(nonceValue),
            .uint256(issuedAt), .uint256(expiresAt),
        ]
    }

    public var claimedSigner: EthereumAddress { subscriber }
    public var nonce: UInt256? { nonceValue }
}
