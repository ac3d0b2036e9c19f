import Foundation
import HeraldCore
import Hummingbird
import Logging
import Synchronization

/// A hostile upstream relay (docs/protocol.md §7) over plain HTTP on loopback: it issues a token with the
/// `expires_in` it is given and answers every push `retry` with the `retryAfter` it is given, both
/// written into the JSON as given (digits that fit no integer type included). For the tests that a
/// downstream survives whatever numbers its upstream hands back.
public final class FakeUpstream: Sendable {
    private let core = FakeServerCore()
    private let expiresIn: String
    private let retryAfter: String
    private let counts = Mutex<(tokens: Int, pushes: Int)>((0, 0))
    private let boundPort = Mutex(0)

    public init(expiresIn: String, retryAfter: String) {
        self.expiresIn = expiresIn
        self.retryAfter = retryAfter
    }

    @discardableResult
    public func start() async throws -> Int {
        let bound = try await core.start { onListening in
            let router = Router(context: FakeRequestContext.self)
            router.post("/v1/relay/token") { _, _ in self.token() }
            router.post("/v1/relay/pushes") { request, _ in try await self.pushes(request) }
            return Application(
                router: router,
                configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "fake-upstream"),
                onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
                logger: Logger(label: "fake-upstream", factory: { _ in SwiftLogNoOpLogHandler() }))
        }
        boundPort.withLock { $0 = bound }
        return bound
    }

    public func stop() { core.stop() }

    public var baseURL: String { "http://127.0.0.1:\(boundPort.withLock { $0 })" }

    /// Token requests and pushes received so far.
    public var tally: (tokens: Int, pushes: Int) { counts.withLock { $0 } }

    private func token() -> Response {
        counts.withLock { $0.tokens += 1 }
        return Self.json(
            #"{"access_token":"fake","token_type":"Bearer","expires_in":\#(expiresIn),"scope":"api.push"}"#)
    }

    private func pushes(_ request: Request) async throws -> Response {
        let body = try JSONParser.parse(Array(try await request.body.collect(upTo: 1 << 20).readableBytesView))
        guard case .array(let pushes)? = body["pushes"] else {
            return Self.json(#"{"results":[]}"#, status: .badRequest)
        }
        counts.withLock { $0.pushes += pushes.count }
        let results = pushes.compactMap { $0["id"]?.stringValue }.map {
            #"{"id":"\#($0)","status":"retry","reason":"upstream busy","retryAfter":\#(retryAfter)}"#
        }
        return Self.json(#"{"results":[\#(results.joined(separator: ","))]}"#)
    }

    private static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
