import Foundation
import GRDB
import HeraldCore

/// Group commit: changes that arrive while a transaction is being written wait and go into the
/// next one together. One transaction, one fsync, many acknowledgements; every waiter is answered
/// only after its transaction committed.
actor GroupCommitWriter {
    private struct Pending {
        let change: DeviceChange
        let continuation: CheckedContinuation<DeviceChangeOutcome, any Error>
    }

    /// Large enough to amortise the fsync, small enough that one batch stays a few milliseconds.
    static let maximumBatch = 256

    private let pool: DatabasePool
    private var pending: [Pending] = []
    private var draining = false

    init(pool: DatabasePool) { self.pool = pool }

    func submit(_ change: DeviceChange) async throws -> DeviceChangeOutcome {
        try await withCheckedThrowingContinuation { continuation in
            pending.append(Pending(change: change, continuation: continuation))
            if !draining {
                draining = true
                Task { await self.drain() }
            }
        }
    }

    private func drain() async {
        while !pending.isEmpty {
            let batch = Array(pending.prefix(Self.maximumBatch))
            pending.removeFirst(batch.count)
            let changes = batch.map(\.change)
            do {
                // The actor is free while GRDB writes: new arrivals queue for the next batch.
                let outcomes = try await pool.write { db in try changes.map { try DeviceChangeSQL.apply($0, in: db) } }
                for (item, outcome) in zip(batch, outcomes) { item.continuation.resume(returning: outcome) }
            } catch {
                for item in batch { item.continuation.resume(throwing: StoreError("write failed: \(error)")) }
            }
        }
        draining = false
    }
}

/// The SQL of one change, inside the batch's transaction. Later changes in a batch see earlier ones.
enum DeviceChangeSQL {
    static func apply(_ change: DeviceChange, in db: Database) throws -> DeviceChangeOutcome {
        let wallet = Data(change.wallet.bytes)
        let nonce = Data(change.nonce.bigEndianBytes)
        let spent = try db.cachedStatement(sql: "SELECT 1 FROM nonces WHERE signer = ? AND nonce = ?")
        if try Int.fetchOne(spent, arguments: [wallet, nonce]) != nil { return .replayed }

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
        let spend = try db.cachedStatement(sql: "INSERT INTO nonces (signer, nonce, retained_until) VALUES (?, ?, ?)")
        try spend.execute(arguments: [wallet, nonce, change.nonceRetainedUntil])
        // A wallet's key never changes (the address is its hash), so the first one recorded stands.
        let remember = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO wallet_keys (wallet, public_key, updated_at) VALUES (?, ?, ?)")
        try remember.execute(arguments: [wallet, Data(change.publicKey.uncompressed), change.now])
        return outcome
    }
}
