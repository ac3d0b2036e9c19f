import Foundation
public import HeraldCore
public import HeraldStore
import PostgresNIO

extension PostgresHeraldStore {
    public func feed(of wallet: EthereumAddress, spam: Bool, limit: Int, offset: Int) async throws -> FeedPage {
        let statement = FeedPageStatement(wallet: wallet, spam: spam, limit: Int64(limit), offset: Int64(offset))
        let rows = try await perform { [self] in try await client.execute(statement, logger: logger).collected() }
        guard let first = rows.first else { throw StoreError("the feed page returned no row") }
        return FeedPage(entries: rows.compactMap(\.entry), total: first.total, unread: first.unread)
    }

    /// Queued pushes due at `now`, oldest first, read without claiming them.
    package func duePushes(now: Int64, limit: Int, platforms: Set<Platform>? = nil) async throws -> [QueuedPush] {
        try await perform { [self] in
            try await client.query(
                """
                SELECT \(unescaped: QueuedPushColumns.list) FROM push_outbox o \(unescaped: QueuedPushColumns.joins)
                WHERE o.status = 'queued' AND o.next_attempt_at <= \(now) AND o.platform = ANY(\(Self.names(platforms)))
                ORDER BY o.next_attempt_at, o.id LIMIT \(Int64(limit))
                """, logger: logger
            ).rows(QueuedPushColumns.read)
        }
    }

    /// Claims due pushes for `owner` until `leaseUntil`. `SKIP LOCKED` lets two nodes claim at the same
    /// moment without waiting on each other or taking the same row: a row one claim has locked, the
    /// other passes over; a row whose claim has not lapsed, neither takes.
    public func claimDuePushes(
        now: Int64, limit: Int, platforms: Set<Platform>?, owner: String, leaseUntil: Int64, after: OutboxPosition?
    ) async throws -> [QueuedPush] {
        let statement = ClaimDuePushesStatement(
            leaseUntil: leaseUntil, owner: owner, now: now, platforms: Self.names(platforms), limit: Int64(limit),
            after: after ?? .start)
        return try await perform { [self] in
            try await client.execute(statement, logger: logger).collected()
        }
    }

    private static func names(_ platforms: Set<Platform>?) -> [String] {
        (platforms ?? Set(Platform.allCases)).map(\.rawValue).sorted()
    }

    public func removeBindings(platform: Platform, deviceToken: String) async throws -> Int {
        try await count(
            """
            WITH removed AS (
              DELETE FROM bindings WHERE device_token = \(deviceToken) AND platform = \(platform.rawValue) RETURNING 1)
            SELECT count(*) FROM removed
            """)
    }

    /// Every outcome in one statement and one transaction; each ends its push's claim. A push already
    /// out of the queue keeps its state: a late duplicate result cannot bring a sent push back; with
    /// `owner`, a push another node claimed meanwhile keeps that node's claim.
    public func record(_ results: [PushAttemptResult], owner: String?) async throws {
        guard !results.isEmpty else { return }
        // One statement updates each row once; a push recorded twice in one call (never seen from the
        // outbox workers) is recorded in order, one statement each, as on SQLite.
        if Set(results.map(\.id)).count < results.count {
            try await perform { [self] in
                try await client.withTransaction(logger: logger) { connection in
                    for result in results {
                        try await Self.record([result], owner: owner, on: connection, logger: logger)
                    }
                }
            }
            return
        }
        // A push that ends unsent is its channel's `failed` event (docs/protocol.md §11.3), queued in the
        // outcome's transaction; a batch of sends alone needs none.
        let endsUnsent = results.contains(where: \.endsUnsent)
        try await perform { [self] in
            if endsUnsent {
                try await client.withTransaction(logger: logger) { connection in
                    try await Self.record(results, owner: owner, on: connection, logger: logger)
                }
            } else {
                try await client.withConnection { connection in
                    try await Self.record(results, owner: owner, on: connection, logger: logger)
                }
            }
        }
    }

    private static func record(
        _ results: [PushAttemptResult], owner: String?, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let unsent = results.filter(\.endsUnsent)
        let changed = try await connection.execute(
            RecordOutcomesStatement(results: results, owner: owner), logger: logger
        ).collected()
        guard !unsent.isEmpty else { return }
        let recorded = Set(changed)
        try await PostgresWebhooks.queueFailed(
            unsent.filter { recorded.contains($0.id) }.map { (id: $0.id, reason: $0.error ?? $0.status) },
            at: Int64(Date().timeIntervalSince1970), on: connection, logger: logger)
    }

    public func pushReport(sid: Int64) async throws -> PushReport? {
        try await perform { [self] in
            let item = try await client.query(
                """
                SELECT n.channel, f.recipient, n.signer FROM feed_items f JOIN notifications n ON n.id = f.notification
                WHERE f.sid = \(sid)
                """, logger: logger
            ).rows { row in
                (
                    channel: try row.address(0), recipient: try row.address(1),
                    signer: try row.cellIsNull(2) ? nil : try row.address(2)
                )
            }.first
            guard let item else { return nil }
            let pushes = try await client.query(
                "SELECT platform, status, attempts, last_error FROM push_outbox WHERE sid = \(sid) ORDER BY id",
                logger: logger
            ).rows { row in
                PushReport.Push(
                    platform: try row.platform(0), status: try row.text(1), attempts: Int(try row.int(2)),
                    lastError: try row.optionalText(3))
            }
            return PushReport(
                sid: sid, channel: item.channel, signer: item.signer, recipient: item.recipient, pushes: pushes)
        }
    }

    /// Counted on the partial index of queued rows.
    public func queuedPushCount() async throws -> Int {
        try await count("SELECT count(*) FROM push_outbox WHERE status = 'queued'")
    }

    public func pushCounts() async throws -> [String: Int] {
        let counts = try await perform { [self] in
            try await client.query("SELECT status, count(*) FROM push_outbox GROUP BY status", logger: logger)
                .rows { (try $0.text(0), Int(try $0.int(1))) }
        }
        return Dictionary(counts, uniquingKeysWith: +)
    }
}

/// The `notifications` columns a §4.2 payload is made of, in one order for every query that reads it.
enum DeliveredColumns {
    static let list = "n.type, n.title, n.body, n.app, n.icon, n.url, n.asub, n.amsg, n.acta, n.aimg, n.epoch"
    static let count = 11

    static func read(_ row: Columns, sid: Int64, secret: String, from start: Int) throws -> DeliveredNotification {
        guard let kind = NotificationPayload.Kind(rawValue: String(try row.int(start))) else {
            throw StoreError(.corrupt, "unknown notification type in store")
        }
        return DeliveredNotification(
            kind: kind, sid: sid, epoch: try row.int(start + 10), title: try row.text(start + 1),
            body: try row.text(start + 2), app: try row.text(start + 3), icon: try row.text(start + 4),
            url: try row.text(start + 5), secret: secret, subject: try row.text(start + 6),
            message: try row.text(start + 7), callToAction: try row.text(start + 8), image: try row.text(start + 9))
    }
}

/// A queued push with its item's content, whether its binding still exists and, for Web Push, the
/// binding's keys (joined on the binding's primary key: at most one row), from an outbox row `o`.
enum QueuedPushColumns {
    static let list = """
        o.id, o.sid, o.wallet, o.platform, o.device_token, o.apns_id, o.queued_at, o.attempts, f.secret,
        \(DeliveredColumns.list),
        o.bisq_message IS NOT NULL OR b.wallet IS NOT NULL,
        o.bisq_message, o.bisq_flags, b.p256dh, b.auth, o.badge, o.read_sync,
        n.channel, n.push_priority, n.push_ttl, n.push_collapse_id, o.next_attempt_at
        """

    static let joins = """
        LEFT JOIN feed_items f ON f.sid = o.sid
        LEFT JOIN notifications n ON n.id = f.notification
        LEFT JOIN bindings b ON b.wallet = o.wallet AND b.platform = o.platform AND b.device_token = o.device_token
        """

    static func read(_ row: Columns) throws -> QueuedPush {
        let sid = try row.optionalInt(1)
        let notification = try sid.flatMap { sid -> DeliveredNotification? in
            guard let secret = try row.optionalText(8) else { return nil }
            return try DeliveredColumns.read(row, sid: sid, secret: secret, from: 9)
        }
        return QueuedPush(
            id: try row.int(0), sid: sid, wallet: try row.address(2), platform: try row.platform(3),
            deviceToken: try row.text(4), apnsID: try row.bytes(5), queuedAt: try row.int(6),
            attempts: Int(try row.int(7)), notification: notification,
            bound: try row.bool(9 + DeliveredColumns.count),
            bisq: try row.optionalText(10 + DeliveredColumns.count).map { message in
                BisqRelayContent(message: message, flags: try row.int(11 + DeliveredColumns.count))
            },
            webPushSubscription: try webPushSubscription(row),
            badge: try row.optionalInt(14 + DeliveredColumns.count).map { Int($0) },
            readSync: try row.bool(15 + DeliveredColumns.count),
            channel: try row.cellIsNull(16 + DeliveredColumns.count)
                ? nil : try row.address(16 + DeliveredColumns.count),
            options: try PushOptions.stored(
                priority: try row.optionalText(17 + DeliveredColumns.count),
                timeToLive: try row.optionalInt(18 + DeliveredColumns.count),
                collapseID: try row.optionalText(19 + DeliveredColumns.count)),
            nextAttemptAt: try row.int(20 + DeliveredColumns.count))
    }

    private static func webPushSubscription(_ row: Columns) throws -> WebPushSubscription? {
        guard try row.platform(3) == .webpush, let p256dh = try row.optionalText(12 + DeliveredColumns.count),
            let auth = try row.optionalText(13 + DeliveredColumns.count)
        else { return nil }
        return WebPushSubscription(storedEndpoint: try row.text(4), p256dh: p256dh, auth: auth)
    }
}

extension PostgresHeraldStore: OutboxInspection {}
