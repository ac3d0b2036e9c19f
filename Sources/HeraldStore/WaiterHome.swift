public import NIOCore
import NIOPosix

/// Where a write's caller gets its answer. With NIO's event loops as Swift's global executor (as
/// `herald serve` runs), a request handler waiting on the writer runs on the event loop of its
/// connection. Resumed from the writer's thread, it would be handed to a loop of NIO's choosing
/// (round robin: half the time the other one, whose response write then hops back to the
/// connection's loop), one cross-thread enqueue per waiter. Resumed from its own loop, it stays there
/// (NIO keeps jobs enqueued from a loop on that loop), and a batch costs one hop per loop. Both
/// backends' writers answer this way (SQLite's from its thread, PostgreSQL's from a lane's task).
public enum WaiterHome {
    /// The loop the caller runs on, when it is one of the singleton group's: those never shut down, so
    /// an answer sent there is never dropped. Anything else (Swift's own pool, a test's private
    /// group) is answered from the writer's thread, as before.
    public static func current() -> (any EventLoop)? {
        guard let loop = MultiThreadedEventLoopGroup.currentEventLoop else { return nil }
        return singletonLoops.contains(ObjectIdentifier(loop)) ? loop : nil
    }

    /// Looked up only once a caller is on some event loop, so a process without one never starts
    /// the singleton group's threads for this.
    private static let singletonLoops: Set<ObjectIdentifier> = Set(
        MultiThreadedEventLoopGroup.singleton.makeIterator().map { ObjectIdentifier($0) })

    /// Runs each answer: those with a home from their loop, one task per loop; the others here.
    public static func deliver(_ answers: [(home: (any EventLoop)?, answer: @Sendable () -> Void)]) {
        var byLoop: [ObjectIdentifier: (loop: any EventLoop, answers: [@Sendable () -> Void])] = [:]
        for (home, answer) in answers {
            guard let home else {
                answer()
                continue
            }
            byLoop[ObjectIdentifier(home), default: (home, [])].answers.append(answer)
        }
        for (loop, answers) in byLoop.values {
            loop.execute { for answer in answers { answer() } }
        }
    }
}
