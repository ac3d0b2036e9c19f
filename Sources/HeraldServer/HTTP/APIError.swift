public import HTTPTypes
public import HeraldCore
public import Hummingbird
import NIOCore

/// An error answered with docs/protocol.md §3's body `{"error": {"code", "message"}}`.
public struct APIError: HTTPResponseError, Sendable {
    public let code: APIErrorCode
    public let message: String
    /// Seconds, for `rate_limited` and `unavailable`.
    public let retryAfter: Int?

    public init(_ code: APIErrorCode, _ message: String, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public init(_ rejection: OperationRejection) { self.init(rejection.code, rejection.message) }

    public var status: HTTPResponse.Status { code.httpStatus }

    public func response(from request: Request, context: some RequestContext) throws -> Response { response }

    /// The error as an answer: its status, the §3 body, and `Retry-After` when it has one.
    public var response: Response {
        var headers: HTTPFields = [.contentType: JSONResponse.contentType]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    public var body: [UInt8] {
        let json = JSONValue.object([
            ("error", .object([("code", .string(code.rawValue)), ("message", .string(message))]))
        ])
        return json.jsonBytes
    }
}

extension APIErrorCode {
    /// The one mapping from error code to HTTP status (docs/protocol.md §3).
    public var httpStatus: HTTPResponse.Status {
        switch self {
        case .badRequest, .invalidWallet, .invalidPlatform, .invalidDeviceToken, .invalidSubscription, .wrongAudience,
            .validityTooLong,
            .badSignature, .invalidPayload, .fieldTooLong, .invalidSettings, .invalidWebhook:
            return .badRequest
        case .expired, .notYetValid, .signatureMismatch, .unauthorized: return .unauthorized
        case .forbidden: return .forbidden
        case .notFound: return .notFound
        case .methodNotAllowed: return .methodNotAllowed
        case .replayed: return .conflict
        case .payloadTooLarge: return .contentTooLarge
        case .unsupportedMediaType: return .unsupportedMediaType
        case .rateLimited: return .tooManyRequests
        case .internal: return .internalServerError
        case .unavailable: return .serviceUnavailable
        }
    }
}
