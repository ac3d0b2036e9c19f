import HeraldCore
import HeraldStore
import PostgresNIO

/// The SQL of one notification, inside its batch's transaction and under the channel's advisory lock
/// (every send of a channel, on every node, takes it: its buckets are read and written under it): what
/// `NotificationPlanner` decided from the facts read here, written as the notification row, one feed item
/// per recipient, one outbox row per binding of each recipient pushed, the buckets and the spent nonce.
/// All of it commits together or not at all.
extension PostgresWriteSQL {
    mutating func submit(_ submission: NotificationSubmission) async throws -> NotificationOutcome {
        let nonce = NonceSpend(
            signer: submission.signer, nonce: submission.nonce, operation: submission.operation,
            retainedUntil: submission.nonceRetainedUntil)
        let facts = try await notificationFacts(submission, digest: nonce.digest.bytes)
        // Replay first, whatever the plan would be: the first answer, or replayed.
        if facts.spent { return try await answer(for: nonce, decode: Self.decodeNotification) }
        let delivery: NotificationDelivery
        switch NotificationPlanner.plan(submission, facts: facts.read) {
        case .deliver(let planned): delivery = planned
        case .refuseUnknownChannel: return .unknownChannel
        case .refuseNotDelegate: return .notDelegate
        case .refuseSetting(let rejection): return .refusedSetting(rejection)
        case .refuseBroadcastLimit(let retryAfter): return .broadcastLimited(retryAfter: retryAfter)
        }
        guard try await spend(nonce, answer: nil) else {
            return try await answer(for: nonce, decode: Self.decodeNotification)
        }
        let notification = try await insert(delivery.stored, channel: submission.channel, signer: submission.signer)
        try await write(delivery.buckets, channel: submission.channel)
        let receipt: NotificationReceipt
        switch delivery.recipients {
        case .everySubscriber(let rules):
            receipt = try await broadcast(
                notification, channel: submission.channel, rules: rules, badges: delivery.badges,
                queuedAt: submission.now)
        case .named(let items, let filtered, let throttled):
            let written = try await deliver(notification, to: items, badges: delivery.badges, queuedAt: submission.now)
            receipt = NotificationReceipt(
                sids: written.sids, spam: items.filter(\.spam).count, pushes: written.pushes, filtered: filtered,
                throttled: throttled, muted: items.filter(\.muted).count)
        }
        try await keep(StoredAnswer.encode(receipt), for: nonce)
        try await remember(submission.publicKey, of: submission.signer, now: submission.now)
        return .accepted(receipt)
    }

    private static func decodeNotification(_ answer: [UInt8]) throws -> NotificationOutcome {
        .accepted(try StoredAnswer.notification(answer))
    }

    /// Whether the nonce is spent, the channel with its settings and broadcast bucket, whether the signer is
    /// a delegate of it (read under the channel's advisory lock, which a Delegate change takes too), and for
    /// each named recipient: whether it subscribes, its mute, its choice of the named setting and its bucket.
    private func notificationFacts(
        _ submission: NotificationSubmission, digest: [UInt8]
    ) async throws -> (spent: Bool, read: NotificationFacts) {
        let channelAddress = bytea(submission.channel)
        let row = try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM nonces WHERE digest = \(bytea(digest))), c.name, c.icon, c.url, c.created_at,
                   c.settings, c.broadcast_full_at,
                   EXISTS (SELECT 1 FROM delegates d
                           WHERE d.channel = \(channelAddress) AND d.delegate = \(bytea(submission.signer)))
            FROM (SELECT 1) AS one LEFT JOIN channels c ON c.address = \(channelAddress)
            """, logger: logger
        ).rows { columns in
            let spent = try columns.bool(0)
            guard let name = try columns.optionalText(1) else {
                return (spent, nil as (ChannelRecord, String, Int64, Bool)?)
            }
            let channel = ChannelRecord(
                address: submission.channel, name: name, icon: try columns.text(2), url: try columns.text(3),
                createdAt: try columns.int(4))
            return (spent, (channel, try columns.text(5), try columns.int(6), try columns.bool(7)))
        }.first
        guard let (spent, found) = row else { throw StoreError("the notification facts returned no row") }
        guard !spent, let (channel, settingsText, broadcastBucket, signerIsDelegate) = found else {
            return (spent, NotificationFacts(channel: nil))
        }
        let settings = try PostgresControlReads.stored(settingsText)
        let named = NotificationPlanner.namedRecipients(of: submission)
        guard !named.isEmpty else {
            return (
                false,
                NotificationFacts(
                    channel: channel, settings: settings, broadcastBucket: broadcastBucket,
                    signerIsDelegate: signerIsDelegate)
            )
        }
        let setting = submission.payload.setting?.id ?? ""
        let rows = try await connection.query(
            """
            SELECT r.position, s.muted_until, c.value, wb.full_at
            FROM unnest(\(named.map { bytea($0) })::bytea[]) WITH ORDINALITY AS r(wallet, position)
            LEFT JOIN subscriptions s ON s.channel = \(channelAddress) AND s.subscriber = r.wallet
            LEFT JOIN subscriber_choices c
              ON c.channel = \(channelAddress) AND c.subscriber = r.wallet AND c.setting = \(setting)
            LEFT JOIN wallet_buckets wb ON wb.channel = \(channelAddress) AND wb.wallet = r.wallet
            """, logger: logger
        ).rows { (try $0.int(0), try $0.optionalInt(1), try $0.optionalInt(2), try $0.optionalInt(3)) }
        var followers: [EthereumAddress: FollowerFacts] = [:]
        var buckets: [EthereumAddress: Int64] = [:]
        for (position, mutedUntil, choice, fullAt) in rows {
            let index = Int(position) - 1
            guard named.indices.contains(index) else { continue }
            if let mutedUntil { followers[named[index]] = FollowerFacts(choice: choice, mutedUntil: mutedUntil) }
            if let fullAt { buckets[named[index]] = fullAt }
        }
        return (
            false,
            NotificationFacts(
                channel: channel, settings: settings, followers: followers, walletBuckets: buckets,
                broadcastBucket: broadcastBucket, signerIsDelegate: signerIsDelegate)
        )
    }

    private func write(_ buckets: BucketUpdates, channel: EthereumAddress) async throws {
        if let fullAt = buckets.broadcast {
            try await run("UPDATE channels SET broadcast_full_at = \(fullAt) WHERE address = \(bytea(channel))")
        }
        guard !buckets.wallets.isEmpty else { return }
        try await run(
            """
            INSERT INTO wallet_buckets (channel, wallet, full_at)
            SELECT \(bytea(channel)), u.wallet, u.full_at
            FROM unnest(\(buckets.wallets.map { bytea($0.wallet) })::bytea[], \(buckets.wallets.map(\.fullAt))::bigint[])
                 AS u(wallet, full_at)
            ON CONFLICT (channel, wallet) DO UPDATE SET full_at = excluded.full_at
            """)
    }

    /// The notification row; `signer` is kept only when a delegate signed (NULL: the channel).
    private func insert(
        _ stored: StoredNotification, channel: EthereumAddress, signer: EthereumAddress
    ) async throws -> Int64 {
        guard let type = Int16(exactly: stored.type) else { throw StoreError("unknown notification type") }
        let delegate = signer == channel ? nil : bytea(signer)
        let id = try await connection.query(
            """
            INSERT INTO notifications (channel, type, title, body, app, icon, url, asub, amsg, acta, aimg, epoch, signer,
                                       push_priority, push_ttl, push_collapse_id)
            VALUES (\(bytea(channel)), \(type), \(stored.title), \(stored.body), \(stored.app), \(stored.icon),
                    \(stored.url), \(stored.subject), \(stored.message), \(stored.callToAction), \(stored.image),
                    \(stored.epoch), \(delegate), \(stored.push.priority?.rawValue), \(stored.push.timeToLive),
                    \(stored.push.collapseID))
            RETURNING id
            """, logger: logger
        ).rows { try $0.int(0) }.first
        guard let id else { throw StoreError("inserting a notification returned no id") }
        return id
    }

    /// The `aps.badge` of a push queued in the same statement as its item (docs/protocol.md §10): the
    /// wallet's items added, after the statement's own upsert (its `counted` CTE, which counts the item),
    /// less those taken away (`wallet_unread_taken`, joined as `t`; migration 0015); NULL for the other
    /// platforms and when badges are off. Never below zero (a rolling upgrade's uncounted items).
    private static func badge(platform: String) -> String {
        """
        CASE WHEN $badges AND \(platform) IN ('ios', 'ios-sandbox')
             THEN greatest(c.added - COALESCE(t.taken, 0), 0) END
        """
    }

    /// One more added for the recipient of each of the `items` CTE's items that are not spam (a send names a
    /// wallet once), in wallet order: two sends to overlapping recipients lock their rows in the same order,
    /// so they cannot deadlock. A broadcast's items come in subscriber order already (its CTE inserted them
    /// so, and a CTE is read in the order it produced): sorting a million rows again spilled to disk. Answers
    /// each wallet's number with its item.
    private static func counted(sorted: Bool) -> String {
        """
        counted AS (
          INSERT INTO wallet_unread_added AS a (wallet, added)
          SELECT recipient, 1 FROM items WHERE NOT spam \(sorted ? "ORDER BY recipient" : "")
          ON CONFLICT (wallet) DO UPDATE SET added = a.added + 1
          RETURNING a.wallet, a.added)
        """
    }

    /// Every subscriber passing the plan's filter: one item each and their pushes (none for the muted), in
    /// one set-based statement: nothing of a recipient crosses into Swift, not even its sid. Items are
    /// inserted in subscriber order, so the sids, from one sequence, follow it and are usually contiguous:
    /// the statement answers their first, last and count, and only a broadcast whose sids another node's
    /// items interleaved reads them back (`sids(of:)`). A million rows returned took about a second.
    private func broadcast(
        _ notification: Int64, channel: EthereumAddress, rules: BroadcastRules, badges: Bool, queuedAt: Int64
    ) async throws -> NotificationReceipt {
        let address = bytea(channel)
        let anyMuted =
            try await connection.query(
                """
                SELECT EXISTS (SELECT 1 FROM subscriptions
                               WHERE channel = \(address) AND muted_until > 0 AND muted_until > \(rules.mutedAt))
                """, logger: logger
            ).rows { try $0.bool(0) }.first ?? false
        let filter = rules.filter
        // The statement's text varies only with what is present, so that each variant stays prepared.
        let choiceJoin =
            filter == nil
            ? ""
            : "LEFT JOIN subscriber_choices c ON c.channel = s.channel AND c.subscriber = s.subscriber AND c.setting = $setting"
        let choiceTest = filter == nil ? "" : "AND COALESCE(c.value, $default) BETWEEN $low AND $high"
        let muteTest =
            anyMuted
            ? "WHERE NOT EXISTS (SELECT 1 FROM subscriptions m WHERE m.channel = $channel AND m.subscriber = i.recipient AND m.muted_until > $now)"
            : ""
        let mutedCount =
            anyMuted
            ? "(SELECT count(*) FROM items i WHERE EXISTS (SELECT 1 FROM subscriptions m WHERE m.channel = $channel AND m.subscriber = i.recipient AND m.muted_until > $now))"
            : "0"
        // The pushes are not sorted: the outbox's order within one broadcast decides nothing, and sorting a
        // million rows spilled to disk.
        let text = """
            WITH items AS (
              INSERT INTO feed_items (recipient, notification)
              SELECT s.subscriber, $notification FROM subscriptions s \(choiceJoin)
              WHERE s.channel = $channel \(choiceTest)
              ORDER BY s.subscriber
              RETURNING sid, recipient, spam),
            \(Self.counted(sorted: false)),
            pushes AS (
              INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at, badge)
              SELECT i.sid, b.wallet, b.platform, b.device_token, $queued, $queued, \(Self.badge(platform: "b.platform"))
              FROM items i JOIN bindings b ON b.wallet = i.recipient JOIN counted c ON c.wallet = i.recipient
                   LEFT JOIN wallet_unread_taken t ON t.wallet = i.recipient \(muteTest)
              RETURNING 1)
            SELECT min(sid), max(sid), count(*), (SELECT count(*) FROM pushes), \(mutedCount),
                   (SELECT count(*) FROM subscriptions WHERE channel = $channel)
            FROM items
            """
        let values: [String: any PostgresThrowingDynamicTypeEncodable] = [
            "notification": notification, "channel": address, "queued": queuedAt, "badges": badges,
            "now": rules.mutedAt, "setting": filter?.setting ?? "", "default": filter?.defaultValue ?? 0,
            "low": filter?.passing.lowerBound ?? 0, "high": filter?.passing.upperBound ?? 0,
        ]
        // Planned from the statistics of an empty `feed_items` (a new database), a per-recipient read of the
        // table the statement is filling was a sequential scan: quadratic, 201 s for 100,000 recipients when
        // each push's badge was a count. Only index scans are allowed for this statement: set back after it,
        // or undone with the transaction if it fails.
        try await run("SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)")
        let row = try await connection.query(try NamedParameters.query(text, values), logger: logger).rows {
            (
                first: try $0.optionalInt(0), last: try $0.optionalInt(1), items: try $0.int(2), pushes: try $0.int(3),
                muted: try $0.int(4), subscribers: try $0.int(5)
            )
        }.first
        try await run("SELECT set_config('enable_seqscan', 'on', true), set_config('enable_bitmapscan', 'on', true)")
        guard let row else { throw StoreError("the broadcast returned no row") }
        let filtered = filter == nil ? 0 : Int(row.subscribers - row.items)
        guard let first = row.first, let last = row.last, row.items > 0 else {
            return NotificationReceipt(sids: [], spam: 0, pushes: 0, filtered: filtered)
        }
        let sids = last - first + 1 == row.items ? Array(first...last) : try await sids(of: notification)
        guard sids.count == row.items else {
            throw StoreError("read \(sids.count) sids back for a broadcast of \(row.items) items")
        }
        return NotificationReceipt(
            sids: sids, spam: 0, pushes: Int(row.pushes), filtered: filtered, muted: Int(row.muted))
    }

    /// A notification's sids in order, read back in its own transaction.
    private func sids(of notification: Int64) async throws -> [Int64] {
        try await connection.query(
            "SELECT sid FROM feed_items WHERE notification = \(notification) ORDER BY sid", logger: logger
        ).rows { try $0.int(0) }
    }

    /// Named recipients (at most a thousand), as planned, in one statement: the items in the order named
    /// (so that their sids follow it), and a push per binding of each recipient pushed.
    private func deliver(
        _ notification: Int64, to items: [PlannedItem], badges: Bool, queuedAt: Int64
    ) async throws -> (sids: [Int64], pushes: Int) {
        guard !items.isEmpty else { return ([], 0) }
        let text = """
            WITH planned AS (
              SELECT wallet, secret, spam, pushed, position
              FROM unnest($wallets::bytea[], $secrets::text[], $spam::bool[], $pushed::bool[])
                   WITH ORDINALITY AS r(wallet, secret, spam, pushed, position)),
            items AS (
              INSERT INTO feed_items (recipient, notification, secret, spam)
              SELECT p.wallet, $notification, p.secret, p.spam FROM planned p ORDER BY p.position
              RETURNING sid, recipient, spam),
            \(Self.counted(sorted: true)),
            pushes AS (
              INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at, badge)
              SELECT i.sid, b.wallet, b.platform, b.device_token, $queued, $queued, \(Self.badge(platform: "b.platform"))
              FROM items i JOIN planned p ON p.wallet = i.recipient JOIN bindings b ON b.wallet = i.recipient
                   LEFT JOIN counted c ON c.wallet = i.recipient LEFT JOIN wallet_unread_taken t ON t.wallet = i.recipient
              WHERE p.pushed ORDER BY i.sid
              RETURNING 1)
            SELECT sid, (SELECT count(*) FROM pushes) FROM items ORDER BY sid
            """
        let values: [String: any PostgresThrowingDynamicTypeEncodable] = [
            "wallets": items.map { bytea($0.wallet) }, "secrets": items.map(\.secret), "spam": items.map(\.spam),
            "pushed": items.map(\.pushed), "notification": notification, "queued": queuedAt, "badges": badges,
        ]
        let rows = try await connection.query(try NamedParameters.query(text, values), logger: logger).rows {
            (sid: try $0.int(0), pushes: try $0.int(1))
        }
        guard rows.count == items.count else {
            throw StoreError("stored \(rows.count) feed items for \(items.count) recipients")
        }
        return (rows.map(\.sid), Int(rows.first?.pushes ?? 0))
    }
}
