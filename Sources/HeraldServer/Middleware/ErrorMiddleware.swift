import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// Turns every failure into docs/protocol.md §3's error body: `APIError` as is, Hummingbird's own errors
/// (unknown route, wrong method, body too large) into their codes, anything else into a logged
/// `500 internal` whose message reveals nothing.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    /// The routes this server answers, to tell 405 (a known path) from 404.
    var routes: [RouteTable.Route] = RouteTable.all

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return try error.response(from: request, context: context)
        } catch let error as HTTPError {
            return try translate(error, request: request).response(from: request, context: context)
        } catch {
            return try Self.unhandled(error, logger: context.logger).response(from: request, context: context)
        }
    }

    /// Any other failure: logged with its type, answered `500 internal` without it (also
    /// `DeviceRouteFastPath`'s).
    static func unhandled(_ error: any Error, logger: Logger) -> APIError {
        // A store failure that no route caught still says whether storage is down (503) or broken (500).
        if error is StoreError { return StoreCall.refusal(error, logger: logger) }
        logger.error("unhandled error: \(String(reflecting: type(of: error))): \(error)")
        return APIError(.internal, "internal error")
    }

    private func translate(_ error: HTTPError, request: Request) -> APIError {
        switch error.status {
        case .notFound:
            if RouteTable.knowsPath(request.uri.path, among: routes) {
                return APIError(.methodNotAllowed, "\(request.method.rawValue) is not allowed on \(request.uri.path)")
            }
            return APIError(.notFound, "no such route")
        case .contentTooLarge:
            return APIError(.payloadTooLarge, "the request body is too large")
        case .unsupportedMediaType:
            return APIError(.unsupportedMediaType, "use Content-Type: application/json")
        case .methodNotAllowed:
            return APIError(.methodNotAllowed, "method not allowed")
        case .tooManyRequests:
            return APIError(.rateLimited, "too many requests")
        default:
            return error.status.code < 500
                ? APIError(.badRequest, error.body ?? "bad request") : APIError(.internal, "internal error")
        }
    }
}
