import Foundation
import HTTPTypes
public import HeraldCore
import Hummingbird
import Logging
import Synchronization

/// A channel's webhook receiver (docs/protocol.md §11.3) over plain HTTP on loopback: answers each POST by
/// its script (then 200), and keeps what it received: the raw body and the `Herald-Signature` header.
public final class FakeWebhookReceiver: Sendable {
    public struct Delivery: Sendable {
        public let body: [UInt8]
        public let signature: String?
        public let status: Int
    }

    private let core = FakeServerCore()
    private let received = Mutex<[Delivery]>([])
    private let acceptedCount = Mutex(0)
    private let boundPort = Mutex(0)

    public init() {}

    public func enqueue(_ answers: [FakeAnswer]) { core.enqueue(answers) }

    /// Listens on `port` (0: a free one) and returns it.
    @discardableResult
    public func start(port: Int = 0) async throws -> Int {
        let bound = try await core.start { onListening in
            let router = Router(context: FakeRequestContext.self)
            router.post("/hook") { request, context in try await self.answer(request, context) }
            return Application(
                router: router,
                configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "fake-receiver"),
                onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
                logger: Logger(label: "fake-receiver", factory: { _ in SwiftLogNoOpLogHandler() }))
        }
        boundPort.withLock { $0 = bound }
        return bound
    }

    public func stop() async { await core.stopAndWait() }

    public var url: String { "http://127.0.0.1:\(boundPort.withLock { $0 })/hook" }

    /// Every request, in the order received.
    public var deliveries: [Delivery] { received.withLock { $0 } }

    /// How many events the requests answered 2xx carried (kept as they arrive: cheap to poll).
    public var acceptedEventCount: Int { acceptedCount.withLock { $0 } }

    /// The events of the requests answered 2xx, in order, each as its JSON.
    public var acceptedEvents: [JSONValue] {
        deliveries.filter { (200..<300).contains($0.status) }.flatMap { delivery -> [JSONValue] in
            guard case .array(let events)? = (try? JSONParser.parse(delivery.body))?["events"] else { return [] }
            return events
        }
    }

    private func answer(_ request: Request, _ context: FakeRequestContext) async throws -> Response {
        let body = Array(try await request.body.collect(upTo: 1 << 22).readableBytesView)
        let signature = request.headers[HTTPField.Name("Herald-Signature")!]
        switch await core.nextAnswer().settle() {
        case .reject(let status, let reason, let retryAfter):
            received.withLock { $0.append(Delivery(body: body, signature: signature, status: status)) }
            var response = FakeAnswer.json(status, .object([("error", .string(reason))]))
            if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            return response
        case .drop:
            received.withLock { $0.append(Delivery(body: body, signature: signature, status: 0)) }
            try await context.channel.close()
            return Response(status: .internalServerError)
        case .accept, .delay:
            received.withLock { $0.append(Delivery(body: body, signature: signature, status: 200)) }
            if case .array(let events)? = (try? JSONParser.parse(body))?["events"] {
                acceptedCount.withLock { $0 += events.count }
            }
            return Response(status: .ok)
        }
    }
}
