import Foundation
import GRDB
import HeraldStore

/// Copies the write-ahead log back into the database file from a connection and a thread of its own,
/// so that the group-commit writer does not: SQLite's automatic checkpoint runs inside the COMMIT that
/// takes the log past 1,000 pages, and every waiter of that batch (a batch of registrations, the 202 of
/// a broadcast to a million subscribers) waited for a copy of the whole log into the file and its fsync.
///
/// PASSIVE checkpoints never block the writer or the readers; frames a reader still needs stay in the
/// log for the next round. The writer's own automatic checkpoint stays on with a high threshold, as a
/// backstop should this thread fall behind.
///
/// Passive rounds alone never let the log start over under steady writes: SQLite writes the log from
/// its start again only when a write transaction begins with every frame already copied, and a round
/// always ends with the frames committed while it ran still to copy. The file then grew by every page
/// written (1 GiB in ten seconds of registrations), each new block allocated by the file system on the
/// commit's path. So once the log is past `restartPages`, a round asks the writer to restart it
/// (`GroupCommitWriter.restartLog`), between two of its transactions, where the write lock is free.
final class WALCheckpointer: @unchecked Sendable {
    /// How often the log is copied back while writes arrive (an idle round costs one system call).
    static let interval: TimeInterval = 0.25
    /// The writer's backstop, in pages (4 KiB each): 1 GiB of log.
    static let writerBackstopPages = 262_144
    /// The log size, in pages, past which a round asks for a restart (64 MiB at 4 KiB a page). A restart
    /// holds up the writer's commits for 2–17 ms (measured under registrations at 6,500/s); at 16 MiB it
    /// came every round, at this size about one round in four.
    static let restartPages = 16_384

    private let connection: DatabaseQueue
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var stopping = false
    private var stopped = false
    private var rounds = 0
    private let interval: TimeInterval
    private let restartPages: Int
    private let requestRestart: @Sendable () -> Void

    init(
        path: String, interval: TimeInterval, restartPages: Int, requestRestart: @escaping @Sendable () -> Void
    ) throws {
        self.interval = interval
        self.restartPages = restartPages
        self.requestRestart = requestRestart
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
            _ = condition.wait(until: Date(timeIntervalSinceNow: interval))
            if stopping { break }
            condition.unlock()
            // A failed round (the disk, a lock) is retried at the next one; the writer's backstop
            // and SQLite's own checkpoint at close keep the log bounded meanwhile.
            let restart = try? connection.writeWithoutTransaction { db in
                guard try db.checkpoint(.passive).walFrameCount >= restartPages else { return false }
                // Once more at once: this copies only what was committed during the first copy, so the
                // writer's restart, which holds up its commits, has only a short tail left to copy.
                try db.checkpoint(.passive)
                return true
            }
            if restart == true { requestRestart() }
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
