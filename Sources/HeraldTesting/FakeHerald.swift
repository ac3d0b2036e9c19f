import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import Logging
import Synchronization

/// A Herald server as a client retrying an operation sees it (docs/protocol.md §11.2), over plain HTTP on
/// loopback: every POST is answered by the script first (a delay, an error status, a dropped connection),
/// then as Herald does: the first copy of a body `202` with `acceptedBody`, every later copy of the same
/// bytes that answer again with `Idempotent-Replay: true`. It records every body it was sent.
public final class FakeHerald: Sendable {
    private let core = FakeServerCore()
    private let acceptedBody: String
    private let state = Mutex<(bodies: [[UInt8]], applied: Set<[UInt8]>)>(([], []))
    private let boundPort = Mutex(0)

    public init(acceptedBody: String = #"{"sid":["1"],"recipients":1,"pushes":1,"filtered":0,"throttled":[]}"#) {
        self.acceptedBody = acceptedBody
    }

    /// Answers to give, in order, before answering as Herald does.
    public func enqueue(_ answers: [FakeAnswer]) { core.enqueue(answers) }

    @discardableResult
    public func start() async throws -> Int {
        let bound = try await core.start { onListening in
            let router = Router(context: FakeRequestContext.self)
            router.post("/v1/notifications") { request, context in try await self.answer(request, context) }
            return Application(
                router: router,
                configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "fake-herald"),
                onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
                logger: Logger(label: "fake-herald", factory: { _ in SwiftLogNoOpLogHandler() }))
        }
        boundPort.withLock { $0 = bound }
        return bound
    }

    public func stop() async { await core.stopAndWait() }

    public var baseURL: String { "http://127.0.0.1:\(boundPort.withLock { $0 })" }

    /// Every body received, in order.
    public var bodies: [[UInt8]] { state.withLock { $0.bodies } }

    private func answer(_ request: Request, _ context: FakeRequestContext) async throws -> Response {
        let body = Array(try await request.body.collect(upTo: 1 << 20).readableBytesView)
        // An accepted copy is applied on arrival and answered after the script's delay, as a server
        // whose answer comes too late for its client.
        let (delay, scripted) = core.nextAnswer().afterDelays
        let repeated = state.withLock { state in
            state.bodies.append(body)
            return scripted == .accept && !state.applied.insert(body).inserted
        }
        if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
        switch scripted {
        case .reject(let status, let reason, let retryAfter):
            var response = FakeAnswer.json(
                status, .object([("error", .object([("code", .string(reason)), ("message", .string(reason))]))]))
            if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            return response
        case .drop:
            try await context.channel.close()
            return Response(status: .internalServerError)
        case .accept, .delay:
            var response = Response(
                status: .accepted, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: acceptedBody)))
            if repeated { response.headers[HTTPField.Name("Idempotent-Replay")!] = "true" }
            return response
        }
    }
}
