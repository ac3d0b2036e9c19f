import HeraldCore
import HeraldStore
import PostgresNIO

/// The SQL of one notification, inside its batch's transaction: the notification row, one feed item
/// per recipient, one outbox row per binding of each recipient that is not spam, and the spent nonce.
/// All of it commits together or not at all.
extension PostgresWriteSQL {
    mutating func submit(_ submission: NotificationSubmission) async throws -> NotificationOutcome {
        let digest = NonceDigest(signer: submission.channel, nonce: submission.nonce).bytes
        guard try await spend(digest, retainedUntil: submission.nonceRetainedUntil) else { return .replayed }
        let channel = try await connection.query(
            "SELECT name, icon, url FROM channels WHERE address = \(bytea(submission.channel))", logger: logger
        ).rows { (app: try $0.text(0), icon: try $0.text(1), url: try $0.text(2)) }.first
        guard let channel else {
            try await unspend(digest)
            return .unknownChannel
        }
        let notification = try await insertNotification(
            submission, app: channel.app, icon: channel.icon, url: channel.url)
        let receipt: NotificationReceipt
        if submission.payload.kind == .broadcast {
            receipt = try await broadcast(notification, channel: submission.channel, queuedAt: submission.now)
        } else {
            receipt = try await deliver(
                notification, to: submission.payload.recipients, channel: submission.channel,
                queuedAt: submission.now)
        }
        try await remember(submission.publicKey, of: submission.channel, now: submission.now)
        return .accepted(receipt)
    }

    private func insertNotification(
        _ submission: NotificationSubmission, app: String, icon: String, url: String
    ) async throws -> Int64 {
        let payload = submission.payload
        // A type 2's visible text is generic: the channel's own title and body are discarded (§4.1).
        let secret = payload.kind == .secret
        let title = secret ? DeliveredNotification.secretTitle(app: app) : payload.title
        let body = secret ? DeliveredNotification.secretBody : payload.body
        guard let type = Int16(payload.kind.rawValue) else { throw StoreError("unknown notification type") }
        let id = try await connection.query(
            """
            INSERT INTO notifications (channel, type, title, body, app, icon, url, asub, amsg, acta, aimg, epoch)
            VALUES (\(bytea(submission.channel)), \(type), \(title), \(body), \(app), \(icon), \(url),
                    \(payload.subject), \(payload.message), \(payload.callToAction), \(payload.image),
                    \(submission.epoch))
            RETURNING id
            """, logger: logger
        ).rows { try $0.int(0) }.first
        guard let id else { throw StoreError("inserting a notification returned no id") }
        return id
    }

    /// Type 1: one item per current subscriber and their pushes, in one set-based statement (a hundred
    /// thousand subscribers never cross into Swift one by one, but their sids do). Items are inserted in
    /// subscriber order, so that the sids, from one sequence, follow it.
    private func broadcast(
        _ notification: Int64, channel: EthereumAddress, queuedAt: Int64
    ) async throws
        -> NotificationReceipt
    {
        let rows = try await connection.query(
            """
            WITH items AS (
              INSERT INTO feed_items (recipient, notification)
              SELECT subscriber, \(notification) FROM subscriptions WHERE channel = \(bytea(channel))
              ORDER BY subscriber
              RETURNING sid, recipient),
            pushes AS (
              INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
              SELECT i.sid, b.wallet, b.platform, b.device_token, \(queuedAt), \(queuedAt)
              FROM items i JOIN bindings b ON b.wallet = i.recipient ORDER BY i.sid
              RETURNING 1)
            SELECT sid, (SELECT count(*) FROM pushes) FROM items ORDER BY recipient
            """, logger: logger
        ).rows { (sid: try $0.int(0), pushes: try $0.int(1)) }
        return NotificationReceipt(sids: rows.map(\.sid), spam: 0, pushes: Int(rows.first?.pushes ?? 0))
    }

    /// Types 2, 3 and 4: at most a thousand named recipients, in one statement. One who does not follow
    /// the channel gets the item marked spam, and no push. Items are inserted in recipient order, so
    /// that their sids follow it.
    private func deliver(
        _ notification: Int64, to recipients: [NotificationPayload.Recipient], channel: EthereumAddress,
        queuedAt: Int64
    ) async throws -> NotificationReceipt {
        let wallets = recipients.map { bytea($0.wallet) }
        // Stored as sent: hex compared case-insensitively, output lowercase (PROTOCOL conventions).
        let secrets = recipients.map { $0.secret?.lowercased() ?? "" }
        let rows = try await connection.query(
            """
            WITH named AS (
              SELECT wallet, secret, position
              FROM unnest(\(wallets)::bytea[], \(secrets)::text[]) WITH ORDINALITY AS r(wallet, secret, position)),
            items AS (
              INSERT INTO feed_items (recipient, notification, secret, spam)
              SELECT n.wallet, \(notification), n.secret,
                     NOT EXISTS (SELECT 1 FROM subscriptions s
                                 WHERE s.channel = \(bytea(channel)) AND s.subscriber = n.wallet)
              FROM named n ORDER BY n.position
              RETURNING sid, recipient, spam),
            pushes AS (
              INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
              SELECT i.sid, b.wallet, b.platform, b.device_token, \(queuedAt), \(queuedAt)
              FROM items i JOIN bindings b ON b.wallet = i.recipient WHERE NOT i.spam ORDER BY i.sid
              RETURNING 1)
            SELECT sid, spam, (SELECT count(*) FROM pushes) FROM items ORDER BY sid
            """, logger: logger
        ).rows { (sid: try $0.int(0), spam: try $0.bool(1), pushes: try $0.int(2)) }
        guard rows.count == recipients.count else {
            throw StoreError("stored \(rows.count) feed items for \(recipients.count) recipients")
        }
        return NotificationReceipt(
            sids: rows.map(\.sid), spam: rows.filter(\.spam).count, pushes: Int(rows.first?.pushes ?? 0))
    }
}
