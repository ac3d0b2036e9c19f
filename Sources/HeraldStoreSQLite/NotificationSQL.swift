import GRDB
import HeraldCore
import HeraldStore

/// The SQL of one notification, inside the batch's transaction: the notification row, one feed item
/// per recipient, one outbox row per binding of each recipient that is not spam, and the spent nonce.
/// All of it commits together or not at all.
enum NotificationSQL {
    static func apply(
        _ submission: NotificationSubmission, in db: Database, ledger: NonceLedger, knownKeys: KnownWalletKeys,
        batch: inout DeviceChangeSQL.BatchNonces
    ) throws -> NotificationOutcome {
        let digest = NonceDigest(signer: submission.channel, nonce: submission.nonce)
        // Memory may only answer "spent" early; the key in `nonces` decides what is fresh.
        if batch.contains(digest) || ledger.contains(digest) { return .replayed }
        let lookup = try RawStatement(db, "SELECT name, icon, url FROM channels WHERE address = ?")
        lookup.bind(1, submission.channel.bytes)
        guard let channel = try lookup.rows({ ($0.text(0), $0.text(1), $0.text(2)) }).first else {
            return .unknownChannel
        }
        guard
            try DeviceChangeSQL.spend(digest, retainedUntil: submission.nonceRetainedUntil, in: db, batch: &batch)
        else { return .replayed }
        let notification = try insertNotification(submission, app: channel.0, icon: channel.1, url: channel.2, in: db)
        let receipt: NotificationReceipt
        if submission.payload.kind == .broadcast {
            receipt = try broadcast(notification, channel: submission.channel, queuedAt: submission.now, in: db)
        } else {
            receipt = try deliver(
                notification, to: submission.payload.recipients, channel: submission.channel,
                queuedAt: submission.now, in: db)
        }
        try DeviceChangeSQL.remember(
            submission.publicKey, of: submission.channel, now: submission.now, in: db, knownKeys: knownKeys,
            batch: &batch)
        return .accepted(receipt)
    }

    private static func insertNotification(
        _ submission: NotificationSubmission, app: String, icon: String, url: String, in db: Database
    ) throws -> Int64 {
        let payload = submission.payload
        // A type 2's visible text is generic: the channel's own title and body are discarded (§4.1).
        let secret = payload.kind == .secret
        let insert = try RawStatement(
            db,
            """
            INSERT INTO notifications (channel, type, title, body, app, icon, url, asub, amsg, acta, aimg, epoch)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insert.bind(1, submission.channel.bytes)
        insert.bind(2, Int64(payload.kind.rawValue) ?? 0)
        insert.bind(3, secret ? DeliveredNotification.secretTitle(app: app) : payload.title)
        insert.bind(4, secret ? DeliveredNotification.secretBody : payload.body)
        insert.bind(5, app)
        insert.bind(6, icon)
        insert.bind(7, url)
        insert.bind(8, payload.subject)
        insert.bind(9, payload.message)
        insert.bind(10, payload.callToAction)
        insert.bind(11, payload.image)
        insert.bind(12, submission.epoch)
        try insert.execute()
        return insert.lastInsertedRowID
    }

    /// Type 1: one item per current subscriber and their pushes, each in a single set-based statement
    /// (a hundred thousand subscribers never cross into Swift one by one). The sids are contiguous: one
    /// statement under the write lock, AUTOINCREMENT counting up.
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

    /// Types 2, 3 and 4: at most a thousand named recipients. One who does not follow the channel gets
    /// the item marked spam, and no push.
    private static func deliver(
        _ notification: Int64, to recipients: [NotificationPayload.Recipient], channel: EthereumAddress,
        queuedAt: Int64, in db: Database
    ) throws -> NotificationReceipt {
        var sids: [Int64] = []
        sids.reserveCapacity(recipients.count)
        var spamCount = 0
        var pushCount = 0
        for recipient in recipients {
            let follows = try RawStatement(db, "SELECT 1 FROM subscriptions WHERE channel = ? AND subscriber = ?")
            follows.bind(1, channel.bytes)
            follows.bind(2, recipient.wallet.bytes)
            let spam = try follows.integer() == nil
            let item = try RawStatement(
                db, "INSERT INTO feed_items (recipient, notification, secret, spam) VALUES (?, ?, ?, ?)")
            item.bind(1, recipient.wallet.bytes)
            item.bind(2, notification)
            // Stored as sent: hex compared case-insensitively, output lowercase (PROTOCOL conventions).
            item.bind(3, recipient.secret?.lowercased() ?? "")
            item.bind(4, spam ? 1 : 0)
            try item.execute()
            let sid = item.lastInsertedRowID
            sids.append(sid)
            if spam {
                spamCount += 1
                continue
            }
            let pushes = try RawStatement(
                db,
                """
                INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
                SELECT ?, wallet, platform, device_token, ?, ? FROM bindings WHERE wallet = ?
                """)
            pushes.bind(1, sid)
            pushes.bind(2, queuedAt)
            pushes.bind(3, queuedAt)
            pushes.bind(4, recipient.wallet.bytes)
            try pushes.execute()
            pushCount += Int(pushes.changes)
        }
        return NotificationReceipt(sids: sids, spam: spamCount, pushes: pushCount)
    }
}
