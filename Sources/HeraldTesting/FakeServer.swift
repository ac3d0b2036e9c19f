import Foundation
public import Hummingbird
import Logging
public import NIOCore
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
/// the background on a port of its own.
final class FakeServerCore: Sendable {
    private let script = Mutex<[FakeAnswer]>([])
    private let task = Mutex<Task<Void, any Error>?>(nil)

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
        let running = Task { try await application.runService(gracefulShutdownSignals: []) }
        task.withLock { $0 = running }
        for await port in ports { return port }
        throw FakeServerError("the fake server did not start")
    }

    func stop() {
        task.withLock { task in
            task?.cancel()
            task = nil
        }
    }

    /// Stops and returns once the listening socket is closed.
    func stopAndWait() async {
        let running = task.withLock { task in
            defer { task = nil }
            return task
        }
        running?.cancel()
        _ = try? await running?.value
    }
}

public struct FakeServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension FakeAnswer {
    /// Runs delays and reports what is left to do: answer with a status and body, or drop.
    func settle() async -> FakeAnswer {
        guard case .delay(let milliseconds, let then) = self else { return self }
        try? await Task.sleep(for: .milliseconds(milliseconds))
        return await then.settle()
    }
}
