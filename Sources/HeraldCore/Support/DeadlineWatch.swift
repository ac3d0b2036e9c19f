import Synchronization

/// Answers within a deadline for many waiters with one timer. `Deadline.race` costs every call two
/// tasks, a timer of Swift's runtime and the hops between them; on PostgreSQL's write path, where every
/// registration waits on a queue that a stuck database never drains (docs/protocol.md §3), that was
/// 20–34 µs of a node's 0.26–0.30 ms a registration. Here a waiter costs one small object and an
/// append: whoever answers first — the work through its `OneAnswer`, or the watch once the deadline
/// passed — answers, and the other finds it answered.
///
/// The watch looks every `tick` while anything waits (a task of its own, ended when nothing does), so
/// a late answer comes up to one tick after its deadline. Work that loses is cancelled only if its
/// starter said how; either way its answer is dropped, and a write that ends after its caller was told
/// `unavailable` may still be stored, as with `Deadline.race`.
public final class DeadlineWatch: Sendable {
    private let tick: Duration
    private let state = Mutex(State())

    private struct State {
        var waiting: [Waiter] = []
        var watching = false
    }

    private struct Waiter {
        let deadline: ContinuousClock.Instant
        /// Answers the waiter `late` unless it was answered; says whether it is still waiting.
        let expire: @Sendable (_ overdue: Bool) -> Bool
    }

    public init(tick: Duration) {
        self.tick = tick
    }

    /// A tick for waiters of `timeout`: a twentieth of it, from 10 to 250 ms.
    public static func tick(for timeout: Duration) -> Duration {
        min(.milliseconds(250), max(.milliseconds(10), timeout / 20))
    }

    /// Waits for the answer `start` arranges (it is handed the `OneAnswer` to resume, and must not
    /// block), or throws `late()` once `timeout` has passed. What `start` returns, if anything, is run
    /// then too: it cancels the work (a task of its own, say) that lost.
    public func answer<T: Sendable>(
        within timeout: Duration, late: @escaping @Sendable () -> any Error,
        _ start: (OneAnswer<T>) -> (@Sendable () -> Void)?
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let answer = OneAnswer(continuation)
            let deadline = ContinuousClock.now + timeout
            let cancel = start(answer)
            let waiter = Waiter(deadline: deadline) { overdue in
                guard overdue else { return !answer.isAnswered }
                if answer.resume(with: .failure(late())) { cancel?() }
                return false
            }
            let startWatching = state.withLock { state in
                state.waiting.append(waiter)
                defer { state.watching = true }
                return !state.watching
            }
            if startWatching { Task { await watch() } }
        }
    }

    /// Whether the watch's task is running (it is while anything waits).
    var isWatching: Bool { state.withLock { $0.watching } }

    /// Every tick: answers the overdue waiters, forgets the answered ones; ends once none waits.
    private func watch() async {
        while true {
            try? await Task.sleep(for: tick)
            let now = ContinuousClock.now
            let done = state.withLock { state in
                state.waiting.removeAll { !$0.expire($0.deadline <= now) }
                if state.waiting.isEmpty { state.watching = false }
                return !state.watching
            }
            if done { return }
        }
    }
}

/// A continuation resumed once, by whichever of its answerers comes first; the others are ignored.
public final class OneAnswer<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T, any Error>?>

    init(_ continuation: CheckedContinuation<T, any Error>) {
        self.continuation = Mutex(continuation)
    }

    var isAnswered: Bool { continuation.withLock { $0 == nil } }

    /// Answers, unless answered already; says whether this was the answer.
    @discardableResult
    public func resume(with result: Result<T, any Error>) -> Bool {
        guard let continuation = continuation.withLock({ $0.take() }) else { return false }
        continuation.resume(with: result)
        return true
    }

    public func resume(returning value: T) { resume(with: .success(value)) }

    public func resume(throwing error: any Error) { resume(with: .failure(error)) }
}
