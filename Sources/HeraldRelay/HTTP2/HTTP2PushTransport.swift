import HeraldCore
public import NIOCore

/// The transport of APNs and FCM: requests to an `https://` service that offers HTTP/2 go as
/// streams of one connection per origin and event loop (``HTTP2PushClient``, frames written
/// straight, flushed once per event-loop tick); anything else (plain `http://`, a service without `h2`) through
/// AsyncHTTPClient. A request that gets no answer in `timeout` fails, and its connection is dropped.
public final class HTTP2PushTransport: PushHTTPTransport {
    let http2: HTTP2PushClient
    let fallback: AsyncHTTPClientTransport
    let routes = PushRoutes()
    static let answerLimit = 1 << 20

    public convenience init(caFile: String? = nil, timeout: TimeAmount = .seconds(30)) throws {
        try self.init(caFile: caFile, timeout: timeout, health: HTTP2Health())
    }

    init(caFile: String?, timeout: TimeAmount, health: HTTP2Health) throws {
        http2 = try HTTP2PushClient(
            tls: try AsyncHTTPClientTransport.tlsConfiguration(caFile: caFile), timeout: timeout, health: health)
        fallback = try AsyncHTTPClientTransport(caFile: caFile, timeout: timeout)
    }

    public func send(_ request: PushHTTPRequest) async throws -> PushHTTPResponse {
        if let route = routes.route(for: request.url),
            let response = try await http2.send(
                request, path: route.path, key: route.origin.key, target: route.origin.target,
                answerLimit: Self.answerLimit)
        {
            return response
        }
        return try await fallback.send(request)
    }

    public func shutdown() async throws {
        await http2.shutdown()
        try await fallback.shutdown()
    }
}
