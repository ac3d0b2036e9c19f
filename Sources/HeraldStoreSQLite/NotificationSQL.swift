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
        let nonce = NonceSpend(
            signer: submission.signer, nonce: submission.nonce, operation: submission.operation,
            retainedUntil: submission.nonceRetainedUntil)
        if nonce.isSpent(batch: batch, ledger: ledger) { return try nonce.answer(in: db, decode: Self.decode) }
        let facts = try NotificationFactsSQL.read(submission, in: db)
        let delivery: NotificationDelivery
        switch NotificationPlanner.plan(submission, facts: facts) {
        case .deliver(let planned): delivery = planned
        case .refuseUnknownChannel: return .unknownChannel
        case .refuseNotDelegate: return .notDelegate
        case .refuseSetting(let rejection): return .refusedSetting(rejection)
        case .refuseBroadcastLimit(let retryAfter): return .broadcastLimited(retryAfter: retryAfter)
        }
        guard try nonce.spend(answer: nil, in: db, batch: &batch) else {
            return try nonce.answer(in: db, decode: Self.decode)
        }
        let notification = try insert(delivery.stored, submission: submission, in: db)
        try NotificationFactsSQL.write(delivery.buckets, channel: submission.channel, in: db)
        let receipt: NotificationReceipt
        switch delivery.recipients {
        case .everySubscriber(let rules):
            receipt = try BroadcastSQL.deliver(
                notification, channel: submission.channel, rules: rules, badges: delivery.badges,
                queuedAt: submission.now, in: db)
        case .named(let items, let filtered, let throttled):
            let written = try deliver(
                notification, to: items, badges: delivery.badges, queuedAt: submission.now, in: db)
            receipt = NotificationReceipt(
                sids: written.sids, spam: items.filter(\.spam).count, pushes: written.pushes, filtered: filtered,
                throttled: throttled, muted: items.filter(\.muted).count)
        }
        try DeviceChangeSQL.remember(
            submission.publicKey, of: submission.signer, now: submission.now, in: db, knownKeys: knownKeys,
            batch: &batch)
        try nonce.keep(StoredAnswer.encode(receipt), in: db)
        return .accepted(receipt)
    }

    private static func decode(_ answer: [UInt8]) throws -> NotificationOutcome {
        .accepted(try StoredAnswer.notification(answer))
    }

    /// The notification row; `signer` is kept only when a delegate signed (NULL: the channel).
    private static func insert(
        _ stored: StoredNotification, submission: NotificationSubmission, in db: Database
    ) throws -> Int64 {
        let insert = try RawStatement(
            db,
            """
            INSERT INTO notifications (channel, type, title, body, app, icon, url, asub, amsg, acta, aimg, epoch, signer,
                                       push_priority, push_ttl, push_collapse_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insert.bind(1, submission.channel.bytes)
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
        if submission.signer != submission.channel { insert.bind(13, submission.signer.bytes) }
        if let priority = stored.push.priority { insert.bind(14, priority.rawValue) }
        if let ttl = stored.push.timeToLive { insert.bind(15, ttl) }
        if let collapseID = stored.push.collapseID { insert.bind(16, collapseID) }
        try insert.execute()
        return insert.lastInsertedRowID
    }

    /// Named recipients (at most a thousand): each item as planned, and a push per binding of those pushed.
    private static func deliver(
        _ notification: Int64, to items: [PlannedItem], badges: Bool, queuedAt: Int64, in db: Database
    ) throws -> (sids: [Int64], pushes: Int) {
        var sids: [Int64] = []
        sids.reserveCapacity(items.count)
        var pushCount = 0
        for planned in items {
            let item = try RawStatement(
                db, "INSERT INTO feed_items (recipient, notification, secret, spam) VALUES (?, ?, ?, ?)",
                .address(planned.wallet), .integer(notification), .text(planned.secret), .integer(planned.spam ? 1 : 0))
            try item.execute()
            let sid = item.lastInsertedRowID
            sids.append(sid)
            if !planned.spam { try UnreadCounterSQL.add(1, to: planned.wallet, in: db) }
            guard planned.pushed else { continue }
            let pushes = try RawStatement(
                db,
                """
                INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at, badge)
                SELECT ?, wallet, platform, device_token, ?, ?, \(UnreadCounterSQL.badge("?", wallet: "wallet", platform: "platform"))
                FROM bindings WHERE wallet = ?
                """, .integer(sid), .integer(queuedAt), .integer(queuedAt), .integer(badges ? 1 : 0),
                .address(planned.wallet))
            try pushes.execute()
            pushCount += Int(pushes.changes)
        }
        return (sids, pushCount)
    }
}
