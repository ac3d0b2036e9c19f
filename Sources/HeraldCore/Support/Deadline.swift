public import Synchronization

/// An answer within a deadline whatever the work does meanwhile. A store call must be answered within
/// the connect timeout (docs/protocol.md §3: postgres-nio queues a lease for up to a minute while its
/// server is down, and a write waits on a continuation no cancellation reaches), and a push's send
/// must end before its lease does (or another claim sends it twice). So the work runs in a task of its
/// own, and the caller is answered by whichever ends first, the work or the timer. Work that loses is
/// cancelled and left to end by itself; its result is dropped.
public enum Deadline {
    // Inlinable, so that each caller gets it specialized: unspecialized, every call looked up the
    // generic metadata of its continuation, result and race box at run time (about 8,000 instructions
    // a push in the instruction-count guard).
    @inlinable
    public static func race<T: Sendable>(
        within timeout: Duration, late: @escaping @Sendable () -> any Error,
        _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let race = Race<T>()
        return try await withCheckedThrowingContinuation { continuation in
            race.answer.withLock { $0 = continuation }
            let worker = Task {
                let result: Result<T, any Error>
                do { result = .success(try await work()) } catch { result = .failure(error) }
                race.answer.withLock { $0.take() }?.resume(with: result)
                race.tasks.withLock { $0.timer }?.cancel()
            }
            let timer = Task {
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                guard let continuation = race.answer.withLock({ $0.take() }) else { return }
                race.tasks.withLock { $0.work }?.cancel()
                continuation.resume(throwing: late())
            }
            race.tasks.withLock { $0 = (worker, timer) }
            // The work may have ended before the timer was stored, so that nothing cancelled the timer.
            if race.answer.withLock({ $0 == nil }) { timer.cancel() }
        }
    }

    /// Who answers the caller (taken once, by the work or the timer), and the two tasks.
    @usableFromInline
    final class Race<T: Sendable>: Sendable {
        @usableFromInline let answer = Mutex<CheckedContinuation<T, any Error>?>(nil)
        @usableFromInline let tasks = Mutex<(work: Task<Void, Never>?, timer: Task<Void, Never>?)>((nil, nil))

        @usableFromInline init() {}
    }
}
