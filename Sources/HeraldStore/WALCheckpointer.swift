import Foundation
import GRDB

/// Copies the write-ahead log back into the database file from a connection and a thread of its own,
/// so that the group-commit writer does not: SQLite's automatic checkpoint runs inside the COMMIT that
/// takes the log past 1,000 pages, and every waiter of that batch (a batch of registrations, the 202 of
/// a broadcast to a million subscribers) waited for a copy of the whole log into the file and its fsync.
///
/// PASSIVE checkpoints never block the writer or the readers; frames a reader still needs stay in the
/// log for the next round. The writer's own automatic checkpoint stays on with a high threshold, as a
/// backstop should this thread fall behind.
final class WALCheckpointer: @unchecked Sendable {
    /// How often the log is copied back while writes arrive (an idle round costs one system call).
    static let interval: TimeInterval = 0.25
    /// The writer's backstop, in pages (4 KiB each): 1 GiB of log.
    static let writerBackstopPages = 262_144

    private let connection: DatabaseQueue
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var stopping = false
    private var stopped = false
    private var rounds = 0

    init(path: String) throws {
        var configuration = Configuration()
        configuration.label = "herald.checkpoint"
        configuration.busyMode = .timeout(10)
        connection = try DatabaseQueue(path: path, configuration: configuration)
        let thread = Thread { [self] in loop() }
        thread.name = "herald-checkpoint"
        thread.start()
    }

    /// Checkpoints run so far (for tests: the thread is alive and working).
    var completedRounds: Int {
        condition.lock()
        defer { condition.unlock() }
        return rounds
    }

    private func loop() {
        condition.lock()
        while !stopping {
            _ = condition.wait(until: Date(timeIntervalSinceNow: Self.interval))
            if stopping { break }
            condition.unlock()
            // A failed round (the disk, a lock) is retried at the next one; the writer's backstop
            // and SQLite's own checkpoint at close keep the log bounded meanwhile.
            _ = try? connection.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            condition.lock()
            rounds += 1
        }
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the thread (after the round under way) and closes its connection.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !stopped { condition.wait() }
        condition.unlock()
        try? connection.close()
    }
}
