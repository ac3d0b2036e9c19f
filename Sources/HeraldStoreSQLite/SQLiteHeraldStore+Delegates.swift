import GRDB
public import HeraldCore
public import HeraldStore

extension SQLiteHeraldStore {
    public func apply(_ change: DelegateChange) async throws -> DelegateOutcome {
        guard case .control(let answer) = try await writer.submit(.control(.delegate(change))),
            let outcome = answer.delegate
        else { throw StoreError("the writer answered a Delegate with another kind of outcome") }
        return outcome
    }

    public func delegates(of channel: EthereumAddress) async throws -> [EthereumAddress] {
        try await read { db in try DelegatesSQL.delegates(of: channel, in: db) }
    }
}

/// docs/protocol.md §11.1 on SQLite: the single writer orders a Delegate change with every send of the
/// channel, which reads its delegates in its own transaction.
enum DelegatesSQL {
    static func delegates(of channel: EthereumAddress, in db: Database) throws -> [EthereumAddress] {
        try RawStatement(
            db, "SELECT delegate FROM delegates WHERE channel = ? ORDER BY delegate", .address(channel)
        ).rows { try EthereumAddress(bytes: $0.blob(0)) }
    }

    /// What `DelegatePlanner` needs, read in the writer's transaction.
    static func plan(_ change: DelegateChange, in db: Database) throws -> DelegatePlan {
        let exists =
            try RawStatement(db, "SELECT 1 FROM channels WHERE address = ?", .address(change.channel)).integer() != nil
        let isDelegate =
            try RawStatement(
                db, "SELECT 1 FROM delegates WHERE channel = ? AND delegate = ?", .address(change.channel),
                .address(change.delegate)
            ).integer() != nil
        let count =
            try RawStatement(db, "SELECT COUNT(*) FROM delegates WHERE channel = ?", .address(change.channel))
            .integer() ?? 0
        return DelegatePlanner.plan(change, channelExists: exists, isDelegate: isDelegate, delegateCount: Int(count))
    }

    static func write(_ plan: DelegatePlan, _ change: DelegateChange, in db: Database) throws {
        switch plan {
        case .insert:
            try RawStatement(
                db, "INSERT INTO delegates (channel, delegate, added_at) VALUES (?, ?, ?)", .address(change.channel),
                .address(change.delegate), .integer(change.signed.now)
            ).execute()
        case .delete:
            try RawStatement(
                db, "DELETE FROM delegates WHERE channel = ? AND delegate = ?", .address(change.channel),
                .address(change.delegate)
            ).execute()
        case .keep, .refuseUnknownChannel, .refuseTooMany: break
        }
    }
}
