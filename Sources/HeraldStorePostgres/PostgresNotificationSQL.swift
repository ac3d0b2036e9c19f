import HeraldCore
import HeraldStore
import PostgresNIO

/// The SQL of one notification, inside its batch's transaction: what `NotificationPlanner` decided from
/// the channel and its followers read here, written as the notification row, one feed item per
/// recipient, one outbox row per binding of each recipient pushed, and the spent nonce. All of it
/// commits together or not at all.
extension PostgresWriteSQL {
    mutating func submit(_ submission: NotificationSubmission) async throws -> NotificationOutcome {
        let digest = NonceDigest(signer: submission.channel, nonce: submission.nonce).bytes
        let facts = try await notificationFacts(submission, digest: digest)
        // Replay first, whatever the plan would be.
        if facts.spent { return .replayed }
        guard case .deliver(let stored, let recipients) = NotificationPlanner.plan(submission, facts: facts.read)
        else { return .unknownChannel }
        guard try await spend(digest, retainedUntil: submission.nonceRetainedUntil) else { return .replayed }
        let notification = try await insert(stored, channel: submission.channel)
        let receipt: NotificationReceipt
        switch recipients {
        case .everySubscriber:
            receipt = try await broadcast(notification, channel: submission.channel, queuedAt: submission.now)
        case .named(let items):
            receipt = try await deliver(notification, to: items, queuedAt: submission.now)
        }
        try await remember(submission.publicKey, of: submission.channel, now: submission.now)
        return .accepted(receipt)
    }

    /// Whether the nonce is spent, the channel, and which named recipients follow it (by their position).
    private func notificationFacts(
        _ submission: NotificationSubmission, digest: [UInt8]
    ) async throws -> (spent: Bool, read: NotificationFacts) {
        let channelAddress = bytea(submission.channel)
        let row = try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM nonces WHERE digest = \(bytea(digest))), c.name, c.icon, c.url, c.created_at
            FROM (SELECT 1) AS one LEFT JOIN channels c ON c.address = \(channelAddress)
            """, logger: logger
        ).rows { columns in
            let spent = try columns.bool(0)
            let name = try columns.optionalText(1)
            guard let name else { return (spent, nil as ChannelRecord?) }
            return (
                spent,
                ChannelRecord(
                    address: submission.channel, name: name, icon: try columns.text(2), url: try columns.text(3),
                    createdAt: try columns.int(4))
            )
        }.first
        guard let (spent, channel) = row else { throw StoreError("the notification facts returned no row") }
        let named = NotificationPlanner.namedRecipients(of: submission)
        guard !spent, channel != nil, !named.isEmpty else {
            return (spent, NotificationFacts(channel: channel, followers: []))
        }
        let positions = try await connection.query(
            """
            SELECT r.position FROM unnest(\(named.map { bytea($0) })::bytea[]) WITH ORDINALITY AS r(wallet, position)
            WHERE EXISTS (SELECT 1 FROM subscriptions s WHERE s.channel = \(channelAddress) AND s.subscriber = r.wallet)
            """, logger: logger
        ).rows { try $0.int(0) }
        let followers = positions.compactMap { named.indices.contains(Int($0) - 1) ? named[Int($0) - 1] : nil }
        return (false, NotificationFacts(channel: channel, followers: Set(followers)))
    }

    private func insert(_ stored: StoredNotification, channel: EthereumAddress) async throws -> Int64 {
        guard let type = Int16(exactly: stored.type) else { throw StoreError("unknown notification type") }
        let id = try await connection.query(
            """
            INSERT INTO notifications (channel, type, title, body, app, icon, url, asub, amsg, acta, aimg, epoch)
            VALUES (\(bytea(channel)), \(type), \(stored.title), \(stored.body), \(stored.app), \(stored.icon),
                    \(stored.url), \(stored.subject), \(stored.message), \(stored.callToAction), \(stored.image),
                    \(stored.epoch))
            RETURNING id
            """, logger: logger
        ).rows { try $0.int(0) }.first
        guard let id else { throw StoreError("inserting a notification returned no id") }
        return id
    }

    /// Every subscriber: one item each and their pushes, in one set-based statement (a hundred thousand
    /// subscribers never cross into Swift one by one, but their sids do). Items are inserted in
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

    /// Named recipients (at most a thousand), as planned, in one statement: the items in the order named
    /// (so that their sids follow it), and a push per binding of each recipient pushed.
    private func deliver(
        _ notification: Int64, to items: [PlannedItem], queuedAt: Int64
    ) async throws -> NotificationReceipt {
        let rows = try await connection.query(
            """
            WITH planned AS (
              SELECT wallet, secret, spam, pushed, position
              FROM unnest(\(items.map { bytea($0.wallet) })::bytea[], \(items.map(\.secret))::text[],
                          \(items.map(\.spam))::bool[], \(items.map(\.pushed))::bool[])
                   WITH ORDINALITY AS r(wallet, secret, spam, pushed, position)),
            items AS (
              INSERT INTO feed_items (recipient, notification, secret, spam)
              SELECT p.wallet, \(notification), p.secret, p.spam FROM planned p ORDER BY p.position
              RETURNING sid, recipient, spam),
            pushes AS (
              INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
              SELECT i.sid, b.wallet, b.platform, b.device_token, \(queuedAt), \(queuedAt)
              FROM items i JOIN planned p ON p.wallet = i.recipient JOIN bindings b ON b.wallet = i.recipient
              WHERE p.pushed ORDER BY i.sid
              RETURNING 1)
            SELECT sid, spam, (SELECT count(*) FROM pushes) FROM items ORDER BY sid
            """, logger: logger
        ).rows { (sid: try $0.int(0), spam: try $0.bool(1), pushes: try $0.int(2)) }
        guard rows.count == items.count else {
            throw StoreError("stored \(rows.count) feed items for \(items.count) recipients")
        }
        return NotificationReceipt(
            sids: rows.map(\.sid), spam: rows.filter(\.spam).count, pushes: Int(rows.first?.pushes ?? 0))
    }
}
