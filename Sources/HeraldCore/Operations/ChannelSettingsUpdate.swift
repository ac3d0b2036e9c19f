/// A channel publishes what its subscribers may choose: `settings` is the exact JSON text of the list
/// (docs/protocol.md §10), checked completely in step 1. Signed by `channel`.
public struct ChannelSettingsUpdate: SignedOperation {
    public static let schema = OperationSchema(
        primaryType: "ChannelSettings",
        fields: [
            .init("channel", .address), .init("settings", .string), .init("audience", .string),
            .init("nonce", .uint256), .init("issuedAt", .uint256, acceptsJSONInteger: true),
            .init("expiresAt", .uint256, acceptsJSONInteger: true),
        ])

    public var channel: EthereumAddress
    public var settings: String
    public var audience: String
    public var nonceValue: UInt256
    public var issuedAt: UInt256
    public var expiresAt: UInt256
    /// `settings` parsed (what the text says; the signature covers the text).
    public let list: ChannelSettingsList

    public init(
        channel: EthereumAddress, settings: String, audience: String, nonce: UInt256, issuedAt: UInt256,
        expiresAt: UInt256
    ) throws(OperationRejection) {
        self.channel = channel
        self.settings = settings
        self.audience = audience
        self.nonceValue = nonce
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        list = try ChannelSettingsList.parse(settings)
    }

    public init(decoded: DecodedFields) throws(OperationRejection) {
        try self.init(
            channel: try decoded.address("channel"), settings: try decoded.string("settings"),
            audience: try decoded.string("audience"), nonce: try decoded.uint256("nonce"),
            issuedAt: try decoded.uint256("issuedAt"), expiresAt: try decoded.uint256("expiresAt"))
    }

    public var fieldValues: [OperationField] {
        [
            .address(channel), .string(settings), .string(audience), .uint256(nonceValue), .uint256(issuedAt),
            .uint256(expiresAt),
        ]
    }

    public var claimedSigner: EthereumAddress { channel }
    public var nonce: UInt256? { nonceValue }
}
