import Hummingbird
import Logging

/// Outermost: counts and times every request by route and status, and logs server errors.
struct ObservabilityMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let metrics: ServerMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let route = context.endpointPath ?? "NotFound"
        metrics.recordRequest(
            route: route, method: request.method.rawValue, status: response.status.code,
            duration: ContinuousClock.now - start)
        return response
    }
}
