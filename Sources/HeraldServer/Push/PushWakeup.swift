import Foundation
public import HeraldCore
import Synchronization

/// Wakes the outbox workers when pushes were queued, so that a push leaves within milliseconds instead
/// of at the next poll. A signal names the platforms it queued for and wakes only the lanes that serve
/// them: a registration's setup confirmation for an iPhone does not send the FCM and Web Push workers
/// to the database for nothing. A signal with nobody waiting is remembered, per platform, once.
public final class PushWakeup: Sendable {
    private struct Sleeper {
        let platforms: Set<Platform>
        let task: Task<Void, Never>
    }

    private struct State {
        var pending: Set<Platform> = []
        var sleepers: [UUID: Sleeper] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Pushes were queued for `platforms` (all of them when a notification's recipients may be on any).
    public func signal(_ platforms: Set<Platform> = Set(Platform.allCases)) {
        state.withLock { state in
            state.pending.formUnion(platforms)
            for sleeper in state.sleepers.values where !sleeper.platforms.isDisjoint(with: platforms) {
                sleeper.task.cancel()
            }
        }
    }

    /// Returns at the next signal for one of `platforms` (or at once if one is pending), or after
    /// `timeout`.
    func wait(for platforms: Set<Platform>, upTo timeout: Duration) async {
        let id = UUID()
        let sleeper = Task { _ = try? await Task.sleep(for: timeout) }
        let signalled = state.withLock { state in
            if !state.pending.isDisjoint(with: platforms) {
                state.pending.subtract(platforms)
                return true
            }
            state.sleepers[id] = Sleeper(platforms: platforms, task: sleeper)
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
            state.pending.subtract(platforms)
        }
    }

    /// Workers asleep in `wait` (for tests).
    var sleeping: Int { state.withLock { $0.sleepers.count } }
}
