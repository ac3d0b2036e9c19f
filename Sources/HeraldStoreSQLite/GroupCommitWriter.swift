import Foundation
import GRDB
import HeraldCore
import HeraldStore
import Logging
import NIOCore
import Synchronization

/// Group commit on a dedicated thread: changes that arrive while a transaction is being written
/// wait and go into the next one together. One transaction, one fsync, many acknowledgements;
/// every waiter is answered only after its transaction committed.
///
/// The loop owns a thread rather than running on Swift's cooperative pool: there, after every
/// commit it would queue behind the CPU-bound signature checks of the very requests it is about to
/// serve, which measured as milliseconds of idle disk per batch.
final class GroupCommitWriter: @unchecked Sendable {
    private struct Pending {
        let write: StoreWrite
        let continuation: CheckedContinuation<StoreWriteOutcome, any Error>
        /// Where the caller is answered (see `WaiterHome`).
        let home: (any EventLoop)?
        /// When it was submitted (`WriterStatistics.now()`).
        let submitted: UInt64
    }

    /// Large enough to amortise the fsync, small enough that one batch stays a few milliseconds.
    static let maximumBatch = 512

    private let pool: DatabasePool
    let ledger: NonceLedger
    /// Wallets whose public key is known to be stored, so most changes skip that probe.
    let knownKeys = KnownWalletKeys()
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var pending: [Pending] = []
    private var started = false
    private var stopping = false
    private var stopped = false
    /// The writer is waiting for writes: the next submission signals it (see `submit`).
    private var writerWaiting = false
    /// Transactions, writes, busy time and waits, for `/metrics` (and tests: writes share transactions).
    let statistics = WriterStatistics(lanes: 1)
    /// What raising the writer thread's priority gave, once the thread runs (for tests).
    let priority = Mutex<WriterThreadPriority?>(nil)
    private let logger: Logger
    private let restartWanted = Atomic<Bool>(false)
    private let restarted = Atomic<Int>(0)

    /// The longest a log restart waits for readers of the old log, in milliseconds.
    static let restartWait = 20

    /// Times the log was started over (for tests).
    var logRestarts: Int { restarted.load(ordering: .relaxed) }

    /// Asks for the log to be started over before the next transaction (the checkpoint thread, once the
    /// log has grown past its threshold: see `WALCheckpointer`).
    func requestLogRestart() { restartWanted.store(true, ordering: .relaxed) }

    init(pool: DatabasePool, ledger: NonceLedger, logger: Logger) {
        self.pool = pool
        self.ledger = ledger
        self.logger = logger
    }

    func submit(_ write: StoreWrite) async throws -> StoreWriteOutcome {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            guard !stopping else {
                condition.unlock()
                continuation.resume(throwing: StoreError.storeClosed)
                return
            }
            pending.append(
                Pending(
                    write: write, continuation: continuation, home: WaiterHome.current(),
                    submitted: WriterStatistics.now()))
            if !started {
                started = true
                let thread = Thread { [self] in loop() }
                thread.name = "herald-group-commit"
                thread.start()
            }
            let wake = writerWaiting
            writerWaiting = false
            condition.unlock()
            // Signalled after the unlock, and only by the first write that finds the writer waiting.
            // Signalled under the lock, the writer (whose thread runs ahead: `WriterThreadPriority`)
            // took the core from this thread at once, found the lock still held and slept again until
            // the unlock: two more context switches for every wake-up, while under load the other
            // core sat idle (`perf record -e sched:sched_switch`, docs/benchmarks.md).
            if wake { condition.signal() }
        }
    }

    /// Finishes what was submitted, then stops the thread. Later submissions fail.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while started && !stopped { condition.wait() }
        condition.unlock()
    }

    private func loop() {
        raisePriority()
        while true {
            condition.lock()
            while pending.isEmpty && !stopping {
                writerWaiting = true
                condition.wait()
            }
            writerWaiting = false
            if pending.isEmpty && stopping {
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let batch = Array(pending.prefix(Self.maximumBatch))
            pending.removeFirst(batch.count)
            condition.unlock()
            let start = WriterStatistics.now()
            if restartWanted.exchange(false, ordering: .relaxed) { restartLog() }
            commit(batch, start: start)
        }
    }

    /// See `WriterThreadPriority`: the writer is scheduled ahead of the request handlers.
    private func raisePriority() {
        let outcome = WriterThreadPriority.raiseCurrentThread()
        priority.withLock { $0 = outcome }
        switch outcome {
        case .raised(let from, let to):
            logger.debug("store writer thread raised to nice \(to) (from \(from))")
        case .unchanged(let nice):
            logger.info(
                """
                store writer thread left at nice \(nice): raising it takes CAP_SYS_NICE or an RLIMIT_NICE \
                that allows it (systemd: LimitNICE=-15), and under load writes then wait less for their commit
                """)
        }
    }

    /// A RESTART checkpoint, between two transactions: it copies what the checkpoint thread's last
    /// passive round left (the frames committed while it ran) and makes the next transaction write the
    /// log from its start. Taken here, the write lock is free; a checkpoint thread would have to win it
    /// from a writer that is almost always in a transaction under load. Readers of the old log are
    /// waited for at most `restartWait`; past that the log restarts at a later request.
    private func restartLog() {
        let done = try? pool.writeWithoutTransaction { db -> Bool in
            // The connection's own wait (the pool's `busyMode`) comes back afterwards.
            let usualWait = try Int.fetchOne(db, sql: "PRAGMA busy_timeout") ?? 0
            try db.execute(sql: "PRAGMA busy_timeout = \(Self.restartWait)")
            defer { try? db.execute(sql: "PRAGMA busy_timeout = \(usualWait)") }
            do {
                try db.checkpoint(.restart)
                return true
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                return false
            }
        }
        if done == true { restarted.add(1, ordering: .relaxed) }
    }

    /// Writes the batch in one transaction and answers it; `start` is when the writer took it up.
    private func commit(_ batch: [Pending], start: UInt64) {
        let writes = batch.map(\.write)
        let ledger = self.ledger
        let knownKeys = self.knownKeys
        let results: [Result<StoreWriteOutcome, any Error>]
        do {
            let (outcomes, spent, keys) = try pool.write { db in
                var batchSpent = DeviceChangeSQL.BatchNonces()
                let outcomes = try writes.map { write -> StoreWriteOutcome in
                    switch write {
                    case .device(let change):
                        return .device(
                            try DeviceChangeSQL.apply(
                                change, in: db, ledger: ledger, knownKeys: knownKeys, batch: &batchSpent))
                    case .subscription(let change):
                        return .subscription(
                            try SubscriptionSQL.apply(
                                change, in: db, ledger: ledger, knownKeys: knownKeys, batch: &batchSpent))
                    case .notification(let submission):
                        return .notification(
                            try NotificationSQL.apply(
                                submission, in: db, ledger: ledger, knownKeys: knownKeys, batch: &batchSpent))
                    case .control(let write):
                        return .control(
                            try SubscriberControlSQL.apply(
                                write, in: db, ledger: ledger, knownKeys: knownKeys, batch: &batchSpent))
                    case .publicKey(let key, let wallet, let now):
                        try DeviceChangeSQL.remember(
                            key, of: wallet, now: now, in: db, knownKeys: knownKeys, batch: &batchSpent)
                        return .publicKeyRemembered
                    case .grouped(let body):
                        return .grouped(Self.inSavepoint(body, db))
                    }
                }
                return (outcomes, batchSpent.entries, batchSpent.keys)
            }
            statistics.committed(writes: batch.count)
            // Only now, committed, do the nonces count as spent and the keys as stored.
            ledger.insert(spent)
            knownKeys.insert(keys)
            results = outcomes.map { .success($0) }
        } catch {
            results = Array(repeating: .failure(StoreError.sqlite(error, "write failed: ")), count: batch.count)
        }
        statistics.busy(since: start)
        statistics.answered(submitted: batch.lazy.map(\.submitted))
        WaiterHome.deliver(
            zip(batch, results).map { item, result in (item.home, { item.continuation.resume(with: result) }) })
    }
}

extension GroupCommitWriter {
    /// Runs a grouped write so that its failure undoes only its own statements and reaches only its
    /// own caller: the registrations in the same batch still commit.
    fileprivate static func inSavepoint(
        _ body: @Sendable (Database) throws -> any Sendable, _ db: Database
    ) -> Result<any Sendable, any Error> {
        // GRDB rolls the savepoint back when the body throws, and rethrows the body's error.
        do {
            var value: any Sendable = ()
            try db.inSavepoint {
                value = try body(db)
                return .commit
            }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }
}
