import Synchronization

/// Requests waiting for a push's outcome (Bisq's POST routes, docs/protocol.md §8), woken by the outbox
/// service of this node once it has recorded that outcome, instead of reading the outbox over and
/// over. Another node may send the push instead: a waiter still reads the row now and then.
public final class PushOutcomeWaiters: Sendable {
    private let waiting = Mutex<[Int64: [PushOutcomeTicket]]>([:])

    public init() {}

    /// A ticket for push `id`, registered before the caller first reads the push's state, so that an
    /// outcome recorded between that read and the wait still wakes it. Give it back with ``leave(_:)``.
    public func enter(_ id: Int64) -> PushOutcomeTicket {
        let ticket = PushOutcomeTicket(id: id)
        waiting.withLock { $0[id, default: []].append(ticket) }
        return ticket
    }

    public func leave(_ ticket: PushOutcomeTicket) {
        waiting.withLock { waiting in
            waiting[ticket.id]?.removeAll { $0 === ticket }
            if waiting[ticket.id]?.isEmpty == true { waiting[ticket.id] = nil }
        }
    }

    /// Wakes everyone waiting for these pushes: their outcomes are recorded (durably).
    public func resolve(_ ids: some Sequence<Int64>) {
        let woken = waiting.withLock { waiting -> [PushOutcomeTicket] in
            guard !waiting.isEmpty else { return [] }
            return ids.flatMap { waiting[$0] ?? [] }
        }
        for ticket in woken { ticket.signal() }
    }

    /// Tickets registered now (tests: none is left behind).
    var count: Int { waiting.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}

/// One waiter's wake-up: set by ``PushOutcomeWaiters/resolve(_:)``, consumed by ``wait(upTo:)``.
public final class PushOutcomeTicket: Sendable {
    let id: Int64
    private struct State {
        var signalled = false
        var continuation: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    init(id: Int64) { self.id = id }

    /// Returns when signalled (at once if it was since the last wait) or after `duration`, whichever
    /// comes first; either way the signal is consumed.
    public func wait(upTo duration: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.signalled() }
            group.addTask { try? await Task.sleep(for: duration) }
            _ = await group.next()
            group.cancelAll()
        }
        state.withLock { $0.signalled = false }
    }

    func signal() {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.signalled = true
            defer { state.continuation = nil }
            return state.continuation
        }
        waiting?.resume()
    }

    /// Suspends until signalled or cancelled; the continuation is resumed exactly once, by whichever
    /// of the two takes it out of `state`.
    private func signalled() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.signalled || Task.isCancelled { return true }
                    state.continuation = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.continuation = nil }
                return state.continuation
            }
            waiting?.resume()
        }
    }
}
