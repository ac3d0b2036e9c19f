import Foundation
import Synchronization

/// Wakes the outbox workers when a notification queued pushes, so that a push leaves within
/// milliseconds instead of at the next poll. A signal with nobody waiting is remembered once.
public final class PushWakeup: Sendable {
    private struct State {
        var pending = false
        var sleepers: [UUID: Task<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func signal() {
        state.withLock { state in
            state.pending = true
            for sleeper in state.sleepers.values { sleeper.cancel() }
        }
    }

    /// Returns at the next signal (or at once if one is pending), or after `timeout`.
    func wait(upTo timeout: Duration) async {
        let id = UUID()
        let sleeper = Task { _ = try? await Task.sleep(for: timeout) }
        let signalled = state.withLock { state in
            if state.pending {
                state.pending = false
                return true
            }
            state.sleepers[id] = sleeper
            return false
        }
        if signalled {
            sleeper.cancel()
            return
        }
        await withTaskCancellationHandler {
            await sleeper.value
        } onCancel: {
            sleeper.cancel()
        }
        state.withLock { state in
            state.sleepers[id] = nil
            state.pending = false
        }
    }
}
