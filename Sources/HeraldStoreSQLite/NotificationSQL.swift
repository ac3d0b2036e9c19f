import GRDB
import HeraldCore
import HeraldStore

/// The SQL of one notification, inside the batch's transaction: what `NotificationPlanner` decided from
/// the channel and its followers read here, written as the notification row, one feed item per
/// recipient, one outbox row per binding of each recipient pushed, and the spent nonce. All of it
/// commits together or not at all.
enum NotificationSQL {
    static func apply(
        _ submission: NotificationSubmission, in db: Database, ledger: NonceLedger, knownKeys: KnownWalletKeys,
        batch: inout DeviceChangeSQL.BatchNonces
    ) throws -> NotificationOutcome {
        let digest = NonceDigest(signer: submission.channel, nonce: submission.nonce)
        // Memory may only answer "spent" early; the key in `nonces` decides what is fresh.
        if batch.contains(digest) || ledger.contains(digest) { return .replayed }
        let facts = try self.facts(submission, in: db)
        guard case .deliver(let stored, let recipients) = NotificationPlanner.plan(submission, facts: facts) else {
            return .unknownChannel
        }
        guard
            try DeviceChangeSQL.spend(digest, retainedUntil: submission.nonceRetainedUntil, in: db, batch: &batch)
        else { return .replayed }
        let notification = try insert(stored, channel: submission.channel, in: db)
        let receipt: NotificationReceipt
        switch recipients {
        case .everySubscriber:
            receipt = try broadcast(notification, channel: submission.channel, queuedAt: submission.now, in: db)
        case .named(let items):
            receipt = try deliver(notification, to: items, queuedAt: submission.now, in: db)
        }
        try DeviceChangeSQL.remember(
            submission.publicKey, of: submission.channel, now: submission.now, in: db, knownKeys: knownKeys,
            batch: &batch)
        return .accepted(receipt)
    }

    /// The channel, and which named recipients follow it: a point lookup each on the subscriptions' key
    /// (at most a thousand, in the writer's transaction; SQLite before 3.41 has no `unhex` to take them
    /// as one array without losing the index).
    private static func facts(_ submission: NotificationSubmission, in db: Database) throws -> NotificationFacts {
        let lookup = try RawStatement(db, "SELECT name, icon, url, created_at FROM channels WHERE address = ?")
        lookup.bind(1, submission.channel.bytes)
        let channel = try lookup.rows { row in
            ChannelRecord(
                address: submission.channel, name: row.text(0), icon: row.text(1), url: row.text(2),
                createdAt: row.integer(3))
        }.first
        guard channel != nil else { return NotificationFacts(channel: nil, followers: []) }
        var followers = Set<EthereumAddress>()
        for wallet in NotificationPlanner.namedRecipients(of: submission) {
            let follows = try RawStatement(db, "SELECT 1 FROM subscriptions WHERE channel = ? AND subscriber = ?")
            follows.bind(1, submission.channel.bytes)
            follows.bind(2, wallet.bytes)
            if try follows.integer() != nil { followers.insert(wallet) }
        }
        return NotificationFacts(channel: channel, followers: followers)
    }

    private static func insert(_ stored: StoredNotification, channel: EthereumAddress, in db: Database) throws -> Int64
    {
        let insert = try RawStatement(
            db,
            """
            INSERT INTO notifications (channel, type, title, body, app, icon, url, asub, amsg, acta, aimg, epoch)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insert.bind(1, channel.bytes)
        insert.bind(2, stored.type)
        insert.bind(3, stored.title)
        insert.bind(4, stored.body)
        insert.bind(5, stored.app)
        insert.bind(6, stored.icon)
        insert.bind(7, stored.url)
        insert.bind(8, stored.subject)
        insert.bind(9, stored.message)
        insert.bind(10, stored.callToAction)
        insert.bind(11, stored.image)
        insert.bind(12, stored.epoch)
        try insert.execute()
        return insert.lastInsertedRowID
    }

    /// Every subscriber: one item each and their pushes, each in a single set-based statement (a hundred
    /// thousand subscribers never cross into Swift one by one). The sids are contiguous: one statement
    /// under the write lock, AUTOINCREMENT counting up.
    private static func broadcast(
        _ notification: Int64, channel: EthereumAddress, queuedAt: Int64, in db: Database
    ) throws -> NotificationReceipt {
        let items = try RawStatement(
            db,
            """
            INSERT INTO feed_items (recipient, notification)
            SELECT subscriber, ? FROM subscriptions WHERE channel = ? ORDER BY subscriber
            """)
        items.bind(1, notification)
        items.bind(2, channel.bytes)
        try items.execute()
        let count = Int64(items.changes)
        guard count > 0 else { return NotificationReceipt(sids: [], spam: 0, pushes: 0) }
        let last = items.lastInsertedRowID
        let first = last - count + 1
        let pushes = try RawStatement(
            db,
            """
            INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
            SELECT f.sid, b.wallet, b.platform, b.device_token, ?, ?
            FROM feed_items f JOIN bindings b ON b.wallet = f.recipient
            WHERE f.sid BETWEEN ? AND ?
            """)
        pushes.bind(1, queuedAt)
        pushes.bind(2, queuedAt)
        pushes.bind(3, first)
        pushes.bind(4, last)
        try pushes.execute()
        return NotificationReceipt(sids: Array(first...last), spam: 0, pushes: Int(pushes.changes))
    }

    /// Named recipients (at most a thousand): each item as planned, and a push per binding of those pushed.
    private static func deliver(
        _ notification: Int64, to items: [PlannedItem], queuedAt: Int64, in db: Database
    ) throws -> NotificationReceipt {
        var sids: [Int64] = []
        sids.reserveCapacity(items.count)
        var pushCount = 0
        for planned in items {
            let item = try RawStatement(
                db, "INSERT INTO feed_items (recipient, notification, secret, spam) VALUES (?, ?, ?, ?)")
            item.bind(1, planned.wallet.bytes)
            item.bind(2, notification)
            item.bind(3, planned.secret)
            item.bind(4, planned.spam ? 1 : 0)
            try item.execute()
            let sid = item.lastInsertedRowID
            sids.append(sid)
            guard planned.pushed else { continue }
            let pushes = try RawStatement(
                db,
                """
                INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
                SELECT ?, wallet, platform, device_token, ?, ? FROM bindings WHERE wallet = ?
                """)
            pushes.bind(1, sid)
            pushes.bind(2, queuedAt)
            pushes.bind(3, queuedAt)
            pushes.bind(4, planned.wallet.bytes)
            try pushes.execute()
            pushCount += Int(pushes.changes)
        }
        return NotificationReceipt(sids: sids, spam: items.filter(\.spam).count, pushes: pushCount)
    }
}
