import Foundation
import HeraldCore
public import Hummingbird
import Logging
public import NIOCore
import ServiceLifecycle
import Synchronization

/// A request context that keeps its channel, so that a fake can drop the connection.
public struct FakeRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// How a fake answers the next request: scripted in order, then `accept` by default.
public enum FakeAnswer: Sendable, Hashable {
    /// 200 and the service's success body.
    case accept
    /// This status, with the service's error body for `reason`, and `Retry-After` when given.
    case reject(status: Int, reason: String, retryAfter: Int? = nil)
    /// Waits, then answers as told.
    indirect case delay(milliseconds: Int, then: FakeAnswer)
    /// Closes the connection without answering.
    case drop
}

/// What every fake shares: a script of answers, a record of requests, and a Hummingbird server run in
/// the background on a port of its own. Stopping is a graceful shutdown of its service group: open
/// connections are closed in order (cancelling the task instead tears them down mid-stream, which
/// NIO's debug builds refuse with a fatal error).
final class FakeServerCore: Sendable {
    private let script = Mutex<[FakeAnswer]>([])
    private let running = Mutex<(group: ServiceGroup, task: Task<Void, any Error>)?>(nil)

    func enqueue(_ answers: [FakeAnswer]) { script.withLock { $0.append(contentsOf: answers) } }

    func nextAnswer() -> FakeAnswer { script.withLock { $0.isEmpty ? .accept : $0.removeFirst() } }

    /// Starts `application` and returns the port it listens on.
    func start(
        _ makeApplication: (@escaping @Sendable (Int) async -> Void) throws -> any ApplicationProtocol
    )
        async throws -> Int
    {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = try makeApplication { port in continuation.yield(port) }
        let logger = Logger(label: "herald-fake", factory: { _ in SwiftLogNoOpLogHandler() })
        let group = ServiceGroup(
            configuration: .init(services: [.init(service: application)], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            try await group.run()
            continuation.finish()
        }
        running.withLock { $0 = (group, task) }
        for await port in ports { return port }
        _ = try await task.value
        throw FakeServerError("the fake server did not start")
    }

    func stop() {
        guard
            let current = running.withLock({ running in
                defer { running = nil }; return running
            })
        else { return }
        Task { await current.group.triggerGracefulShutdown() }
    }

    /// Stops and returns once the listening socket is closed.
    func stopAndWait() async {
        guard
            let current = running.withLock({ running in
                defer { running = nil }; return running
            })
        else { return }
        await current.group.triggerGracefulShutdown()
        _ = try? await current.task.value
    }
}

public struct FakeServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension FakeAnswer {
    /// A JSON response, as both services answer.
    static func json(_ status: Int, _ value: JSONValue) -> Response {
        Response(
            status: .init(code: status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: value.jsonBytes)))
    }

    /// What is left to do once the delays are over (answer with a status and body, or drop), and how
    /// long they add up to.
    var afterDelays: (milliseconds: Int, answer: FakeAnswer) {
        guard case .delay(let milliseconds, let then) = self else { return (0, self) }
        let rest = then.afterDelays
        return (milliseconds + rest.milliseconds, rest.answer)
    }

    /// Runs delays and reports what is left to do.
    func settle() async -> FakeAnswer {
        let (milliseconds, answer) = afterDelays
        if milliseconds > 0 { try? await Task.sleep(for: .milliseconds(milliseconds)) }
        return answer
    }
}
