/// Binds (or unbinds) a device token to a wallet. Signed by `wallet`. docs/protocol.md §2.1.
public struct DeviceBinding: SignedOperation {
    public enum Action: String, Sendable, Hashable, CaseIterable {
        case register, unregister
    }

    public static let schema = OperationSchema(
        primaryType: "DeviceBinding",
        fields: [
            .init("action", .string), .init("wallet", .address), .init("platform", .string),
            .init("deviceToken", .string), .init("audience", .string), .init("nonce", .uint256),
            .init("issuedAt", .uint256, acceptsJSONInteger: true),
            .init("expiresAt", .uint256, acceptsJSONInteger: true),
        ])

    public var action: Action
    public var wallet: EthereumAddress
    public var platform: Platform
    /// The token exactly as signed; see ``normalizedDeviceToken`` for storage.
    public var deviceToken: String
    public var audience: String
    public var nonceValue: UInt256
    public var issuedAt: UInt256
    public var expiresAt: UInt256

    public init(
        action: Action, wallet: EthereumAddress, platform: Platform, deviceToken: String, audience: String,
        nonce: UInt256, issuedAt: UInt256, expiresAt: UInt256
    ) {
        self.action = action
        self.wallet = wallet
        self.platform = platform
        self.deviceToken = deviceToken
        self.audience = audience
        self.nonceValue = nonce
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    public init(decoded: DecodedFields) throws(OperationRejection) {
        let action = try Action(decoded: decoded)
        let platformText = try decoded.string("platform")
        guard let platform = Platform(rawValue: platformText), platform != .webpush else {
            throw OperationRejection(.invalidPlatform, "platform must be ios, ios-sandbox or android")
        }
        let token = try decoded.string("deviceToken")
        guard DeviceToken.isValid(token, for: platform) else {
            throw OperationRejection(.invalidDeviceToken, "deviceToken is not a valid \(platform.rawValue) token")
        }
        self.init(
            action: action, wallet: try decoded.address("wallet"), platform: platform, deviceToken: token,
            audience: try decoded.string("audience"), nonce: try decoded.uint256("nonce"),
            issuedAt: try decoded.uint256("issuedAt"), expiresAt: try decoded.uint256("expiresAt"))
    }

    public var fieldValues: [OperationField] {
        [
            .string(action.rawValue), .address(wallet), .string(platform.rawValue), .string(deviceToken),
            .string(audience), .uint256(nonceValue), .uint256(issuedAt), .uint256(expiresAt),
        ]
    }

    public var claimedSigner: EthereumAddress { wallet }
    public var nonce: UInt256? { nonceValue }
    /// Lowercased for APNs tokens: the form stored and compared.
    public var normalizedDeviceToken: String { DeviceToken.normalized(deviceToken, for: platform) }
}

extension DeviceBinding.Action {
    /// The signed `action` field (`bad_request` when it is neither action), for both binding kinds.
    init(decoded: DecodedFields) throws(OperationRejection) {
        guard let action = Self(rawValue: try decoded.string("action")) else {
            throw OperationRejection(.badRequest, "action must be \"register\" or \"unregister\"")
        }
        self = action
    }
}
