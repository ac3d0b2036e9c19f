public import HeraldCore
public import HeraldStore
import PostgresNIO

extension PostgresHeraldStore {
    public func apply(_ change: DelegateChange) async throws -> DelegateOutcome {
        try await control(.delegate(change)) { $0.delegate }
    }

    public func delegates(of channel: EthereumAddress) async throws -> [EthereumAddress] {
        try await perform { [self] in
            try await client.query(
                "SELECT delegate FROM delegates WHERE channel = \(bytea(channel)) ORDER BY delegate", logger: logger
            ).rows { try $0.address(0) }
        }
    }
}

/// docs/protocol.md §11.1's Delegate, under the channel's advisory lock: every send of the channel takes
/// it too and reads its delegates under it, so a send after a removal's answer finds the removal.
extension PostgresWriteSQL {
    /// nil: the nonce was spent meanwhile (by another node: this insert waited for its commit).
    mutating func apply(_ change: DelegateChange, nonce: NonceSpend) async throws -> SubscriberControlOutcome? {
        let channel = bytea(change.channel)
        let delegate = bytea(change.delegate)
        let facts = try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM channels WHERE address = \(channel)),
                   EXISTS (SELECT 1 FROM delegates WHERE channel = \(channel) AND delegate = \(delegate)),
                   (SELECT count(*) FROM delegates WHERE channel = \(channel))
            """, logger: logger
        ).rows { (try $0.bool(0), try $0.bool(1), try $0.int(2)) }.first
        guard let (exists, isDelegate, count) = facts else { throw StoreError("the delegate facts returned no row") }
        let plan = DelegatePlanner.plan(
            change, channelExists: exists, isDelegate: isDelegate, delegateCount: Int(count))
        guard case .applied = plan.answer else { return .delegate(plan.answer) }
        guard try await spend(nonce, answer: nil) else { return nil }
        switch plan {
        case .insert:
            try await run(
                """
                INSERT INTO delegates (channel, delegate, added_at) VALUES (\(channel), \(delegate), \(change.signed.now))
                """)
        case .delete:
            try await run("DELETE FROM delegates WHERE channel = \(channel) AND delegate = \(delegate)")
        default: break
        }
        return .delegate(plan.answer)
    }
}
