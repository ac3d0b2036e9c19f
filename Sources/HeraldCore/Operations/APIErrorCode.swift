/// The error codes of docs/protocol.md §3, as they appear in `{"error": {"code": …}}`.
public enum APIErrorCode: String, Sendable, Hashable, CaseIterable, Codable {
    case badRequest = "bad_request"
    case invalidWallet = "invalid_wallet"
    case invalidPlatform = "invalid_platform"
    case invalidDeviceToken = "invalid_device_token"
    case invalidSubscription = "invalid_subscription"
    case wrongAudience = "wrong_audience"
    case validityTooLong = "validity_too_long"
    case badSignature = "bad_signature"
    case invalidPayload = "invalid_payload"
    case fieldTooLong = "field_too_long"
    /// A ChannelSettings list or a subscriber's choices that break docs/protocol.md §10 (400).
    case invalidSettings = "invalid_settings"
    /// A Webhook whose `url` or `events` break docs/protocol.md §11.3 (400).
    case invalidWebhook = "invalid_webhook"
    case expired
    case notYetValid = "not_yet_valid"
    case signatureMismatch = "signature_mismatch"
    case unauthorized
    case forbidden
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"
    case replayed
    case payloadTooLarge = "payload_too_large"
    case unsupportedMediaType = "unsupported_media_type"
    case rateLimited = "rate_limited"
    case `internal`
    /// Storage does not answer now: retry after `Retry-After` (503).
    case unavailable
}

/// Why a signed operation was refused: a §3 code and a message safe to show (no secrets).
public struct OperationRejection: Error, Sendable, Hashable, CustomStringConvertible {
    public let code: APIErrorCode
    public let message: String

    public init(_ code: APIErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
