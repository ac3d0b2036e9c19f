/// Mutes a channel's pushes to `subscriber` until `until` (Unix seconds; `0` unmutes). Signed by
/// `subscriber`. docs/protocol.md §10: the range of `until` is checked against the clock in the operation's
/// transaction, after the subscription.
public struct Mute: SignedOperation {
    public static let schema = OperationSchema(
        primaryType: "Mute",
        fields: [
            .init("channel", .address), .init("subscriber", .address),
            .init("until", .uint256, acceptsJSONInteger: true), .init("audience", .string),
            .init("nonce", .uint256), .init("issuedAt", .uint256, acceptsJSONInteger: true),
            .init("expiresAt", .uint256, acceptsJSONInteger: true),
        ])

    /// The longest mute: ten years of 365 days.
    public static let maximumSeconds: Int64 = 315_360_000

    public var channel: EthereumAddress
    public var subscriber: EthereumAddress
    public var until: UInt256
    public var audience: String
    public var nonceValue: UInt256
    public var issuedAt: UInt256
    public var expiresAt: UInt256

    public init(
        channel: EthereumAddress, subscriber: EthereumAddress, until: UInt256, audience: String, nonce: UInt256,
        issuedAt: UInt256, expiresAt: UInt256
    ) {
        self.channel = channel
        self.subscriber = subscriber
        self.until = until
        self.audience = audience
        self.nonceValue = nonce
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    public init(decoded: DecodedFields) throws(OperationRejection) {
        self.init(
            channel: try decoded.address("channel"), subscriber: try decoded.address("subscriber"),
            until: try decoded.uint256("until"), audience: try decoded.string("audience"),
            nonce: try decoded.uint256("nonce"), issuedAt: try decoded.uint256("issuedAt"),
            expiresAt: try decoded.uint256("expiresAt"))
    }

    public var fieldValues: [OperationField] {
        [
            .address(channel), .address(subscriber), .uint256(until), .string(audience), .uint256(nonceValue),
            .uint256(issuedAt), .uint256(expiresAt),
        ]
    }

    public var claimedSigner: EthereumAddress { subscriber }
    public var nonce: UInt256? { nonceValue }

    /// `until` as Unix seconds, saturated: any value past `Int64.max` is refused by the range check anyway.
    public var untilSeconds: Int64 { until.clampedInt64 }

    /// docs/protocol.md §10: `0` unmutes; otherwise `now < until ≤ now + ten years`.
    public static func isAllowed(until: Int64, now: Int64) -> Bool {
        until == 0 || (until > now && until - now <= maximumSeconds)
    }
}
