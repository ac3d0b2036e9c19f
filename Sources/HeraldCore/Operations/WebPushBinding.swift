/// Binds (or unbinds) a Web Push subscription to a wallet. Signed by `wallet`. docs/protocol.md §2.1, §9.
public struct WebPushBinding: SignedOperation {
    /// The same two actions as a device binding.
    public typealias Action = DeviceBinding.Action

    public static let schema = OperationSchema(
        primaryType: "WebPushBinding",
        fields: [
            .init("action", .string), .init("wallet", .address), .init("endpoint", .string),
            .init("p256dh", .string), .init("auth", .string), .init("audience", .string), .init("nonce", .uint256),
            .init("issuedAt", .uint256, acceptsJSONInteger: true),
            .init("expiresAt", .uint256, acceptsJSONInteger: true),
        ])

    public var action: Action
    public var wallet: EthereumAddress
    /// The three fields exactly as signed.
    public var endpoint: String
    public var p256dh: String
    public var auth: String
    public var audience: String
    public var nonceValue: UInt256
    public var issuedAt: UInt256
    public var expiresAt: UInt256

    public init(
        action: Action, wallet: EthereumAddress, endpoint: String, p256dh: String, auth: String, audience: String,
        nonce: UInt256, issuedAt: UInt256, expiresAt: UInt256
    ) {
        self.action = action
        self.wallet = wallet
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        self.audience = audience
        self.nonceValue = nonce
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    public init(decoded: DecodedFields) throws(OperationRejection) {
        let action = try Action(decoded: decoded)
        let endpoint = try decoded.string("endpoint")
        let p256dh = try decoded.string("p256dh")
        let auth = try decoded.string("auth")
        // An unregister is validated like a register (§9), though its keys are not compared. The
        // endpoint's network is judged by the server, with the networks its operator allows.
        _ = try WebPushSubscription(endpoint: endpoint, p256dh: p256dh, auth: auth, policy: nil)
        self.init(
            action: action, wallet: try decoded.address("wallet"), endpoint: endpoint, p256dh: p256dh, auth: auth,
            audience: try decoded.string("audience"), nonce: try decoded.uint256("nonce"),
            issuedAt: try decoded.uint256("issuedAt"), expiresAt: try decoded.uint256("expiresAt"))
    }

    public var fieldValues: [OperationField] {
        [
            .string(action.rawValue), .address(wallet), .string(endpoint), .string(p256dh), .string(auth),
            .string(audience), .uint256(nonceValue), .uint256(issuedAt), .uint256(expiresAt),
        ]
    }

    public var claimedSigner: EthereumAddress { wallet }
    public var nonce: UInt256? { nonceValue }

    /// The validated subscription, keys unpadded: the form stored. An IP-literal host must pass `policy`.
    public func subscription(policy: WebPushNetworkPolicy) throws(OperationRejection) -> WebPushSubscription {
        try WebPushSubscription(endpoint: endpoint, p256dh: p256dh, auth: auth, policy: policy)
    }
}
