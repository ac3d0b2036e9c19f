import Foundation
import GRDB
import HeraldCore
import HeraldStore

/// The SQL of one subscription change, inside the batch's transaction.
enum SubscriptionSQL {
    static func apply(
        _ change: SubscriptionChange, in db: Database, ledger: NonceLedger, knownKeys: KnownWalletKeys,
        batch: inout DeviceChangeSQL.BatchNonces
    ) throws -> SubscriptionChangeOutcome {
        let nonce = NonceSpend(
            signer: change.subscriber, nonce: change.nonce, operation: change.operation,
            retainedUntil: change.nonceRetainedUntil)
        if nonce.isSpent(batch: batch, ledger: ledger) {
            return try nonce.answer(in: db, decode: StoredAnswer.subscription)
        }
        let known = try RawStatement(db, "SELECT 1 FROM channels WHERE address = ?")
        known.bind(1, change.channel.bytes)
        let plan = SubscriptionChangePlanner.plan(change, channelExists: try known.integer() != nil)
        guard plan != .refuseUnknownChannel else { return .unknownChannel }
        guard try nonce.spend(answer: nil, in: db, batch: &batch) else {
            return try nonce.answer(in: db, decode: StoredAnswer.subscription)
        }

        let outcome: SubscriptionChangeOutcome
        switch plan {
        case .refuseUnknownChannel:
            return .unknownChannel
        case .subscribe:
            let insert = try RawStatement(
                db, "INSERT OR IGNORE INTO subscriptions (channel, subscriber, since) VALUES (?, ?, ?)")
            insert.bind(1, change.channel.bytes)
            insert.bind(2, change.subscriber.bytes)
            insert.bind(3, change.now)
            try insert.execute()
            outcome = .subscribed(created: insert.changes > 0)
        case .unsubscribe:
            let delete = try RawStatement(db, "DELETE FROM subscriptions WHERE channel = ? AND subscriber = ?")
            delete.bind(1, change.channel.bytes)
            delete.bind(2, change.subscriber.bytes)
            try delete.execute()
            outcome = .unsubscribed(existed: delete.changes > 0)
        }
        try nonce.keep(StoredAnswer.encode(outcome), in: db)
        try WebhookEventsSQL.queue(
            WebhookEventPlanner.event(
                for: change, outcome: outcome, webhook: try WebhookEventsSQL.events(of: change.channel, in: db)),
            at: change.now, in: db)
        try DeviceChangeSQL.remember(
            change.publicKey, of: change.subscriber, now: change.now, in: db, knownKeys: knownKeys, batch: &batch)
        return outcome
    }
}
