import GRDB
import HeraldCore
import HeraldStore

/// What `NotificationPlanner` needs, read in the send's transaction (the single writer serialises it with
/// every change to what it reads), and the bucket times its plan writes back.
enum NotificationFactsSQL {
    static func read(_ submission: NotificationSubmission, in db: Database) throws -> NotificationFacts {
        let channels = try RawStatement(
            db, "SELECT name, icon, url, created_at, settings, broadcast_full_at FROM channels WHERE address = ?",
            .address(submission.channel)
        ).rows { row in
            (
                ChannelRecord(
                    address: submission.channel, name: row.text(0), icon: row.text(1), url: row.text(2),
                    createdAt: row.integer(3)),
                row.text(4), row.integer(5)
            )
        }
        guard let (channel, settingsText, broadcastBucket) = channels.first else {
            return NotificationFacts(channel: nil)
        }
        let settings = try SubscriberControlReads.stored(settingsText)
        // A delegate's send (docs/protocol.md §11.1): the single writer orders it with every Delegate change.
        var signerIsDelegate = false
        if submission.signer != submission.channel {
            signerIsDelegate =
                try RawStatement(
                    db, "SELECT 1 FROM delegates WHERE channel = ? AND delegate = ?", .address(submission.channel),
                    .address(submission.signer)
                ).integer() != nil
        }
        // A point lookup each on the subscriptions' and choices' keys (at most a thousand, in the writer's
        // transaction; SQLite before 3.41 has no `unhex` to take them as one array without losing the index).
        let setting = submission.payload.setting?.id ?? ""
        var followers: [EthereumAddress: FollowerFacts] = [:]
        var buckets: [EthereumAddress: Int64] = [:]
        let readsBuckets = NotificationPlanner.readsWalletBuckets(submission)
        for wallet in NotificationPlanner.namedRecipients(of: submission) {
            let follower = try RawStatement(
                db,
                """
                SELECT s.muted_until, c.value FROM subscriptions s
                LEFT JOIN subscriber_choices c ON c.channel = s.channel AND c.subscriber = s.subscriber AND c.setting = ?
                WHERE s.channel = ? AND s.subscriber = ?
                """, .text(setting), .address(submission.channel), .address(wallet)
            ).rows { FollowerFacts(choice: $0.isNull(1) ? nil : $0.integer(1), mutedUntil: $0.integer(0)) }
            followers[wallet] = follower.first
            guard readsBuckets else { continue }
            buckets[wallet] = try RawStatement(
                db, "SELECT full_at FROM wallet_buckets WHERE channel = ? AND wallet = ?", .address(submission.channel),
                .address(wallet)
            ).integer()
        }
        return NotificationFacts(
            channel: channel, settings: settings, followers: followers, walletBuckets: buckets,
            broadcastBucket: broadcastBucket, signerIsDelegate: signerIsDelegate)
    }

    static func write(_ buckets: BucketUpdates, channel: EthereumAddress, in db: Database) throws {
        if let fullAt = buckets.broadcast {
            try RawStatement(
                db, "UPDATE channels SET broadcast_full_at = ? WHERE address = ?", .integer(fullAt), .address(channel)
            ).execute()
        }
        for update in buckets.wallets {
            try RawStatement(
                db,
                """
                INSERT INTO wallet_buckets (channel, wallet, full_at) VALUES (?, ?, ?)
                ON CONFLICT (channel, wallet) DO UPDATE SET full_at = excluded.full_at
                """, .address(channel), .address(update.wallet), .integer(update.fullAt)
            ).execute()
        }
    }
}

/// A broadcast as set-based statements: every subscriber passing the plan's filter gets an item, and every
/// binding of those not muted a push (a hundred thousand subscribers never cross into Swift one by one).
/// The sids are contiguous: one statement under the write lock, AUTOINCREMENT counting up.
enum BroadcastSQL {
    static func deliver(
        _ notification: Int64, channel: EthereumAddress, rules: BroadcastRules, badges: Bool, queuedAt: Int64,
        in db: Database
    ) throws -> NotificationReceipt {
        let items: RawStatement
        if let filter = rules.filter {
            items = try RawStatement(
                db,
                """
                INSERT INTO feed_items (recipient, notification)
                SELECT s.subscriber, ? FROM subscriptions s
                LEFT JOIN subscriber_choices c ON c.channel = s.channel AND c.subscriber = s.subscriber AND c.setting = ?
                WHERE s.channel = ? AND COALESCE(c.value, ?) BETWEEN ? AND ?
                ORDER BY s.subscriber
                """, .integer(notification), .text(filter.setting), .address(channel), .integer(filter.defaultValue),
                .integer(filter.passing.lowerBound), .integer(filter.passing.upperBound))
        } else {
            items = try RawStatement(
                db,
                """
                INSERT INTO feed_items (recipient, notification)
                SELECT subscriber, ? FROM subscriptions WHERE channel = ? ORDER BY subscriber
                """, .integer(notification), .address(channel))
        }
        try items.execute()
        let count = Int64(items.changes)
        var filtered = 0
        if rules.filter != nil {
            let subscribers =
                try RawStatement(db, "SELECT COUNT(*) FROM subscriptions WHERE channel = ?", .address(channel))
                .integer() ?? 0
            filtered = Int(subscribers - count)
        }
        guard count > 0 else { return NotificationReceipt(sids: [], spam: 0, pushes: 0, filtered: filtered) }
        let last = items.lastInsertedRowID
        let first = last - count + 1
        try UnreadCounterSQL.addOneForEachItem(first, through: last, in: db)
        let anyMuted =
            try RawStatement(
                db, "SELECT 1 FROM subscriptions WHERE channel = ? AND muted_until > 0 AND muted_until > ? LIMIT 1",
                .address(channel), .integer(rules.mutedAt)
            ).integer() != nil
        // Every item's wallet has its number now (just added to): a join reads it, cheaper than a
        // correlated subquery per push.
        let badge = UnreadCounterSQL.badge("?", unread: "u.unread", platform: "b.platform")
        let pushes: RawStatement
        if anyMuted {
            pushes = try RawStatement(
                db,
                """
                INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at, badge)
                SELECT f.sid, b.wallet, b.platform, b.device_token, ?, ?, \(badge)
                FROM feed_items f JOIN bindings b ON b.wallet = f.recipient JOIN wallet_unread u ON u.wallet = f.recipient
                WHERE f.sid BETWEEN ? AND ?
                  AND f.recipient NOT IN (SELECT subscriber FROM subscriptions INDEXED BY subscriptions_muted
                                          WHERE channel = ? AND muted_until > 0 AND muted_until > ?)
                """, .integer(queuedAt), .integer(queuedAt), .integer(badges ? 1 : 0), .integer(first), .integer(last),
                .address(channel), .integer(rules.mutedAt))
        } else {
            pushes = try RawStatement(
                db,
                """
                INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at, badge)
                SELECT f.sid, b.wallet, b.platform, b.device_token, ?, ?, \(badge)
                FROM feed_items f JOIN bindings b ON b.wallet = f.recipient JOIN wallet_unread u ON u.wallet = f.recipient
                WHERE f.sid BETWEEN ? AND ?
                """, .integer(queuedAt), .integer(queuedAt), .integer(badges ? 1 : 0), .integer(first), .integer(last))
        }
        try pushes.execute()
        var muted = 0
        if anyMuted {
            muted = Int(
                try RawStatement(
                    db,
                    """
                    SELECT COUNT(*) FROM subscriptions s JOIN feed_items f
                      ON f.recipient = s.subscriber AND f.spam = 0 AND f.sid BETWEEN ? AND ?
                    WHERE s.channel = ? AND s.muted_until > 0 AND s.muted_until > ?
                    """, .integer(first), .integer(last), .address(channel), .integer(rules.mutedAt)
                ).integer() ?? 0)
        }
        return NotificationReceipt(
            sids: Array(first...last), spam: 0, pushes: Int(pushes.changes), filtered: filtered, muted: muted)
    }
}
