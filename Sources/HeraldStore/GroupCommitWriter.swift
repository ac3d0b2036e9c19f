import Foundation
import GRDB
import HeraldCore

/// Group commit on a dedicated thread: changes that arrive while a transaction is being written
/// wait and go into the next one together. One transaction, one fsync, many acknowledgements;
/// every waiter is answered only after its transaction committed.
///
/// The loop owns a thread rather than running on Swift's cooperative pool: there, after every
/// commit it would queue behind the CPU-bound signature checks of the very requests it is about to
/// serve, which measured as milliseconds of idle disk per batch.
final class GroupCommitWriter: @unchecked Sendable {
    private struct Pending {
        let change: DeviceChange
        let continuation: CheckedContinuation<DeviceChangeOutcome, any Error>
    }

    /// Large enough to amortise the fsync, small enough that one batch stays a few milliseconds.
    static let maximumBatch = 512

    private let pool: DatabasePool
    let ledger: NonceLedger
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var pending: [Pending] = []
    private var started = false
    private var stopping = false
    private var stopped = false

    init(pool: DatabasePool, ledger: NonceLedger) {
        self.pool = pool
        self.ledger = ledger
    }
    let debugBatches = ProcessInfo.processInfo.environment["HERALD_DEBUG_BATCH"] != nil

    func submit(_ change: DeviceChange) async throws -> DeviceChangeOutcome {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            defer { condition.unlock() }
            guard !stopping else {
                continuation.resume(throwing: StoreError("the store is closed"))
                return
            }
            pending.append(Pending(change: change, continuation: continuation))
            if !started {
                started = true
                let thread = Thread { [self] in loop() }
                thread.name = "herald-group-commit"
                thread.start()
            }
            condition.signal()
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
        while true {
            condition.lock()
            while pending.isEmpty && !stopping { condition.wait() }
            if pending.isEmpty && stopping {
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let batch = Array(pending.prefix(Self.maximumBatch))
            pending.removeFirst(batch.count)
            condition.unlock()
            commit(batch)
        }
    }

    private func commit(_ batch: [Pending]) {
        let changes = batch.map(\.change)
        let ledger = self.ledger
        do {
            let t0 = ContinuousClock.now
            let (outcomes, spent) = try pool.write { db in
                var batchSpent = DeviceChangeSQL.BatchNonces()
                let outcomes = try changes.map {
                    try DeviceChangeSQL.apply($0, in: db, ledger: ledger, batch: &batchSpent)
                }
                return (outcomes, batchSpent.entries)
            }
            // Only now, committed, do the nonces count as spent in memory.
            ledger.insert(spent)
            if debugBatches {
                FileHandle.standardError.write(Data("batch \(changes.count) \(ContinuousClock.now - t0)\n".utf8))
            }
            for (item, outcome) in zip(batch, outcomes) { item.continuation.resume(returning: outcome) }
        } catch {
            for item in batch { item.continuation.resume(throwing: StoreError("write failed: \(error)")) }
        }
    }
}

/// The SQL of one change, inside the batch's transaction. Later changes in a batch see earlier ones.
enum DeviceChangeSQL {
    /// Nonces spent by the batch being written, not yet committed.
    struct BatchNonces {
        private var seen = Set<NonceDigest>()
        private(set) var entries: [(NonceDigest, Int64)] = []

        func contains(_ digest: NonceDigest) -> Bool { seen.contains(digest) }

        mutating func add(_ digest: NonceDigest, _ retainedUntil: Int64) {
            seen.insert(digest)
            entries.append((digest, retainedUntil))
        }
    }

    static func apply(
        _ change: DeviceChange, in db: Database, ledger: NonceLedger, batch: inout BatchNonces
    ) throws
        -> DeviceChangeOutcome
    {
        let digest = NonceDigest(signer: change.wallet, nonce: change.nonce)
        if batch.contains(digest) || ledger.contains(digest) { return .replayed }
        let wallet = Data(change.wallet.bytes)

        let outcome: DeviceChangeOutcome
        let key: StatementArguments = [wallet, change.platform.rawValue, change.deviceToken]
        switch change.action {
        case .register:
            let refresh = try db.cachedStatement(
                sql: "UPDATE bindings SET last_seen = ? WHERE wallet = ? AND platform = ? AND device_token = ?")
            try refresh.execute(arguments: [change.now] + key)
            if db.changesCount > 0 {
                outcome = .registered(created: false)
            } else {
                let count = try db.cachedStatement(sql: "SELECT COUNT(*) FROM bindings WHERE wallet = ?")
                if try Int.fetchOne(count, arguments: [wallet]) ?? 0 >= change.maxBindingsPerWallet {
                    return .overLimit
                }
                let insert = try db.cachedStatement(
                    sql:
                        "INSERT INTO bindings (wallet, platform, device_token, created_at, last_seen) VALUES (?, ?, ?, ?, ?)"
                )
                try insert.execute(arguments: key + [change.now, change.now])
                outcome = .registered(created: true)
            }
        case .unregister:
            let delete = try db.cachedStatement(
                sql: "DELETE FROM bindings WHERE wallet = ? AND platform = ? AND device_token = ?")
            try delete.execute(arguments: key)
            outcome = db.changesCount > 0 ? .unregistered : .absent
        }
        let spend = try db.cachedStatement(sql: "INSERT INTO nonces (digest, retained_until) VALUES (?, ?)")
        try spend.execute(arguments: [Data(digest.bytes), change.nonceRetainedUntil])
        batch.add(digest, change.nonceRetainedUntil)
        // A wallet's key never changes (the address is its hash), so the first one recorded stands.
        let remember = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO wallet_keys (wallet, public_key, updated_at) VALUES (?, ?, ?)")
        try remember.execute(arguments: [wallet, Data(change.publicKey.uncompressed), change.now])
        return outcome
    }
}
