import Foundation
import GRDB
public import HeraldCore
public import HeraldStore

extension SQLiteHeraldStore {
    public func submit(_ notification: NotificationSubmission) async throws -> NotificationOutcome {
        guard case .notification(let outcome) = try await writer.submit(.notification(notification)) else {
            throw StoreError("the writer answered a notification with another kind of outcome")
        }
        return outcome
    }

    public func feed(of wallet: EthereumAddress, spam: Bool, limit: Int, offset: Int) async throws -> FeedPage {
        try await read { db in
            let count = try RawStatement(db, "SELECT COUNT(*) FROM feed_items WHERE recipient = ? AND spam = ?")
            count.bind(1, wallet.bytes)
            count.bind(2, spam ? 1 : 0)
            let total = Int(try count.integer() ?? 0)
            let unread = try UnreadCounterSQL.unread(of: wallet, in: db)
            guard total > offset else { return FeedPage(entries: [], total: total, unread: unread) }
            let page = try RawStatement(
                db,
                """
                SELECT f.sid, f.secret, \(DeliveredColumns.list), n.channel, f.read
                FROM feed_items f JOIN notifications n ON n.id = f.notification
                WHERE f.recipient = ? AND f.spam = ? ORDER BY f.sid DESC LIMIT ? OFFSET ?
                """)
            page.bind(1, wallet.bytes)
            page.bind(2, spam ? 1 : 0)
            page.bind(3, Int64(limit))
            page.bind(4, Int64(offset))
            let entries = try page.rows { row in
                FeedEntry(
                    sender: try EthereumAddress(bytes: row.blob(DeliveredColumns.count + 2)),
                    notification: try DeliveredColumns.read(row, sid: row.integer(0), secret: row.text(1), from: 2),
                    read: row.integer(DeliveredColumns.count + 3) != 0)
            }
            return FeedPage(entries: entries, total: total, unread: unread)
        }
    }

    package func duePushes(now: Int64, limit: Int, platforms: Set<Platform>? = nil) async throws -> [QueuedPush] {
        let selected = Self.platformList(platforms)
        return try await read { db in
            let due = try RawStatement(
                db,
                Self.queuedPushSelect
                    + """
                    WHERE o.status = 'queued' AND o.next_attempt_at <= ? AND o.platform IN (\(selected.placeholders))
                    ORDER BY o.next_attempt_at, o.id LIMIT ?
                    """)
            due.bind(1, now)
            selected.bind(to: due, from: 2)
            due.bind(Int32(2 + selected.names.count), Int64(limit))
            return try due.rows(Self.queuedPush)
        }
    }

    public func claimDuePushes(
        now: Int64, limit: Int, platforms: Set<Platform>?, owner: String, leaseUntil: Int64, after: OutboxPosition?
    ) async throws -> [QueuedPush] {
        let selected = Self.platformList(platforms)
        let start = after ?? .start
        // An empty set names no platform (nil names them all).
        guard !selected.names.isEmpty else { return [] }
        return try await groupedWrite { db in
            let claim = try RawStatement(db, Self.claimStatements[selected.names.count - 1])
            claim.bind(1, now)
            claim.bind(2, Int64(limit))
            claim.bind(3, leaseUntil)
            claim.bind(4, owner)
            claim.bind(5, start.nextAttemptAt)
            claim.bind(6, start.id)
            selected.bind(to: claim, from: 7)
            let ids = try claim.rows { $0.integer(0) }
            guard !ids.isEmpty else { return [] }
            // The claimed rows by id (a JSON array keeps the statement's text, and so its cache entry, fixed).
            let read = try RawStatement(
                db,
                Self.queuedPushSelect
                    + "WHERE o.id IN (SELECT value FROM json_each(?)) ORDER BY o.next_attempt_at, o.id")
            read.bind(1, Self.jsonArray(ids))
            return try read.rows(Self.queuedPush)
        }
    }

    /// Claims the oldest due pushes of `platforms` platforms (?7, ?8, …) at ?1 past the position (?5, ?6), at
    /// most ?2, until ?3 for ?4, and answers their ids: each platform read in order from that position in the
    /// due index (platform, next_attempt_at, id), the reads merged (SQLite's MERGE of a UNION ALL, no sort)
    /// until ?2 are found. Scanning the index by time alone, a lane with nothing of its own read every other
    /// queued push at each poll, on the writer (10 ms with 100,000 queued for APNs).
    static func claimSQL(platforms: Int) -> String {
        let eachPlatform = (0..<platforms).map { index in
            """
            SELECT id, next_attempt_at FROM push_outbox
            WHERE platform = ?\(7 + index) AND status = 'queued' AND next_attempt_at <= ?1
              AND (next_attempt_at, id) > (?5, ?6)
              AND (claimed_until IS NULL OR claimed_until <= ?1)
            """
        }
        return """
            UPDATE push_outbox SET claimed_until = ?3, claimed_by = ?4
            WHERE id IN (SELECT id FROM (\(eachPlatform.joined(separator: " UNION ALL "))
                                         ORDER BY next_attempt_at, id LIMIT ?2))
            RETURNING id
            """
    }

    /// `claimSQL` for one platform, two, … every platform (at index count - 1).
    private static let claimStatements = (1...Platform.allCases.count).map { claimSQL(platforms: $0) }

    /// A platform filter as a fixed IN list (at most three values), so that statements stay cached.
    private static func platformList(_ platforms: Set<Platform>?) -> PlatformList {
        PlatformList(names: (platforms ?? Set(Platform.allCases)).map(\.rawValue).sorted())
    }

    private struct PlatformList {
        let names: [String]
        var placeholders: String { names.map { _ in "?" }.joined(separator: ", ") }

        func bind(to statement: RawStatement, from first: Int32) {
            for (index, name) in names.enumerated() { statement.bind(first + Int32(index), name) }
        }
    }

    /// A queued push with its item's content, whether its binding still exists and, for Web Push, the
    /// binding's keys (one join on the binding's primary key: at most one row); `WHERE …` follows.
    private static let queuedPushSelect = """
        SELECT o.id, o.sid, o.wallet, o.platform, o.device_token, o.apns_id, o.queued_at, o.attempts,
               f.secret, \(DeliveredColumns.list),
               o.bisq_message IS NOT NULL OR b.wallet IS NOT NULL,
               o.bisq_message, o.bisq_flags, b.p256dh, b.auth, o.badge, o.read_sync,
               n.channel, n.push_priority, n.push_ttl, n.push_collapse_id, o.next_attempt_at
        FROM push_outbox o
        LEFT JOIN feed_items f ON f.sid = o.sid
        LEFT JOIN notifications n ON n.id = f.notification
        LEFT JOIN bindings b ON b.wallet = o.wallet AND b.platform = o.platform AND b.device_token = o.device_token

        """

    private static func queuedPush(_ row: RawStatement.Columns) throws -> QueuedPush {
        guard let platform = Platform(rawValue: row.text(3)) else {
            throw StoreError(.corrupt, "unknown platform in the push outbox")
        }
        let sid = row.isNull(1) ? nil : row.integer(1)
        let notification =
            try sid.flatMap { sid in
                row.isNull(9) ? nil : try DeliveredColumns.read(row, sid: sid, secret: row.text(8), from: 9)
            }
        return QueuedPush(
            id: row.integer(0), sid: sid, wallet: try EthereumAddress(bytes: row.blob(2)), platform: platform,
            deviceToken: row.text(4), apnsID: row.blob(5), queuedAt: row.integer(6),
            attempts: Int(row.integer(7)), notification: notification,
            bound: row.integer(9 + DeliveredColumns.count) == 1,
            bisq: row.isNull(10 + DeliveredColumns.count)
                ? nil
                : BisqRelayContent(
                    message: row.text(10 + DeliveredColumns.count), flags: row.integer(11 + DeliveredColumns.count)),
            webPushSubscription: platform == .webpush
                && !row.isNull(12 + DeliveredColumns.count) && !row.isNull(13 + DeliveredColumns.count)
                ? WebPushSubscription(
                    storedEndpoint: row.text(4), p256dh: row.text(12 + DeliveredColumns.count),
                    auth: row.text(13 + DeliveredColumns.count))
                : nil,
            badge: row.isNull(14 + DeliveredColumns.count) ? nil : Int(row.integer(14 + DeliveredColumns.count)),
            readSync: row.integer(15 + DeliveredColumns.count) != 0,
            channel: row.isNull(16 + DeliveredColumns.count)
                ? nil : try EthereumAddress(bytes: row.blob(16 + DeliveredColumns.count)),
            options: try PushOptions.stored(
                priority: row.isNull(17 + DeliveredColumns.count) ? nil : row.text(17 + DeliveredColumns.count),
                timeToLive: row.isNull(18 + DeliveredColumns.count) ? nil : row.integer(18 + DeliveredColumns.count),
                collapseID: row.isNull(19 + DeliveredColumns.count) ? nil : row.text(19 + DeliveredColumns.count)),
            nextAttemptAt: row.integer(20 + DeliveredColumns.count))
    }

    public func removeBindings(platform: Platform, deviceToken: String) async throws -> Int {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM bindings WHERE device_token = ? AND platform = ?",
                arguments: [deviceToken, platform.rawValue])
            return db.changesCount
        }
    }

    public func record(_ results: [PushAttemptResult], owner: String?) async throws {
        guard !results.isEmpty else { return }
        try await groupedWrite { db in
            // One statement per distinct outcome: most are "sent", and a provider that fails every push
            // (or one that is missing) fails a whole batch with one reason.
            for (key, ids) in Self.outcomeGroups(results) {
                // The rows an unsent outcome changed are its webhook events' pushes; a send needs none.
                let update = try RawStatement(db, key.endsUnsent ? Self.recordSQL + " RETURNING id" : Self.recordSQL)
                update.bind(1, key.status)
                update.bind(2, key.nextAttemptAt)
                if let error = key.error { update.bind(3, error) }
                update.bind(4, Self.jsonArray(ids))
                if let owner { update.bind(5, owner) }
                update.bind(6, key.isAttempt ? 1 : 0)
                guard key.endsUnsent else {
                    try update.execute()
                    continue
                }
                // A push that ended unsent is its channel's `failed` event (docs/protocol.md §11.3).
                try WebhookEventsSQL.queueFailed(
                    ids: try update.rows { $0.integer(0) }, reason: key.error ?? key.status,
                    at: Int64(Date().timeIntervalSince1970), in: db)
            }
        }
    }

    private static let recordSQL = """
        UPDATE push_outbox
        SET status = ?1, attempts = attempts + ?6, next_attempt_at = ?2, last_error = COALESCE(?3, last_error),
            claimed_until = NULL, claimed_by = NULL
        WHERE id IN (SELECT value FROM json_each(?4)) AND status = 'queued'
          AND (?5 IS NULL OR claimed_by = ?5)
        """

    /// Ids by the outcome they record, in the order outcomes first appear. When one push has more than
    /// one outcome in the call, each is its own group, in order, so the last one decides, as if one by one.
    private static func outcomeGroups(_ results: [PushAttemptResult]) -> [(OutcomeKey, [Int64])] {
        guard Set(results.map(\.id)).count == results.count else {
            return results.map { (OutcomeKey($0), [$0.id]) }
        }
        var groups: [(OutcomeKey, [Int64])] = []
        var index: [OutcomeKey: Int] = [:]
        for result in results {
            let key = OutcomeKey(result)
            if let at = index[key] {
                groups[at].1.append(result.id)
            } else {
                index[key] = groups.count
                groups.append((key, [result.id]))
            }
        }
        return groups
    }

    /// What an outcome writes to its row ("sent" keeps the last error: its key has none).
    private struct OutcomeKey: Hashable {
        let status: String
        let nextAttemptAt: Int64
        let error: String?
        let isAttempt: Bool
        let endsUnsent: Bool

        init(_ result: PushAttemptResult) {
            status = result.status
            nextAttemptAt = result.nextAttemptAt
            error = result.error
            isAttempt = result.isAttempt
            endsUnsent = result.endsUnsent
        }
    }

    /// Row ids as a JSON array, for `json_each(?)`: the statement's text, and so its cache entry, stays fixed
    /// whatever the number of ids.
    static func jsonArray(_ ids: [Int64]) -> String {
        "[" + ids.map(String.init).joined(separator: ",") + "]"
    }

    /// Oldest rows first by id (ids grow with queue time), so each chunk finds its rows at once.
    public func pruneFinishedPushes(queuedBefore cutoff: Int64) async throws -> Int {
        try await deleteInChunks(
            """
            DELETE FROM push_outbox WHERE id IN
              (SELECT id FROM push_outbox WHERE status != 'queued' AND queued_at < ? ORDER BY id LIMIT 5000)
            """, cutoff)
    }

    public func pushReport(sid: Int64) async throws -> PushReport? {
        try await read { db in
            let item = try RawStatement(
                db,
                """
                SELECT n.channel, f.recipient, n.signer FROM feed_items f JOIN notifications n ON n.id = f.notification
                WHERE f.sid = ?
                """)
            item.bind(1, sid)
            guard
                let (channel, recipient, signer) = try item.rows({
                    ($0.blob(0), $0.blob(1), $0.isNull(2) ? nil : $0.blob(2))
                }).first
            else { return nil }
            let pushes = try RawStatement(
                db, "SELECT platform, status, attempts, last_error FROM push_outbox WHERE sid = ? ORDER BY id")
            pushes.bind(1, sid)
            return PushReport(
                sid: sid, channel: try EthereumAddress(bytes: channel),
                signer: try signer.map { try EthereumAddress(bytes: $0) },
                recipient: try EthereumAddress(bytes: recipient),
                pushes: try pushes.rows { row in
                    guard let platform = Platform(rawValue: row.text(0)) else {
                        throw StoreError(.corrupt, "unknown platform in the push outbox")
                    }
                    return PushReport.Push(
                        platform: platform, status: row.text(1), attempts: Int(row.integer(2)),
                        lastError: row.isNull(3) ? nil : row.text(3))
                })
        }
    }

    public func queuedPushCount() async throws -> Int {
        try await read { db in
            let count = try RawStatement(db, "SELECT COUNT(*) FROM push_outbox WHERE status = 'queued'")
            return Int(try count.integer() ?? 0)
        }
    }

    public func pushCounts() async throws -> [String: Int] {
        try await read { db in
            let counts = try RawStatement(db, "SELECT status, COUNT(*) FROM push_outbox GROUP BY status")
            return Dictionary(uniqueKeysWithValues: try counts.rows { ($0.text(0), Int($0.integer(1))) })
        }
    }
}

/// The `notifications` columns a §4.2 payload is made of, in one order for every query that reads it.
enum DeliveredColumns {
    static let list = "n.type, n.title, n.body, n.app, n.icon, n.url, n.asub, n.amsg, n.acta, n.aimg, n.epoch"
    static let count: Int32 = 11

    static func read(
        _ row: RawStatement.Columns, sid: Int64, secret: String, from start: Int32
    ) throws -> DeliveredNotification {
        guard let kind = NotificationPayload.Kind(rawValue: String(row.integer(start))) else {
            throw StoreError(.corrupt, "unknown notification type in store")
        }
        return DeliveredNotification(
            kind: kind, sid: sid, epoch: row.integer(start + 10), title: row.text(start + 1),
            body: row.text(start + 2), app: row.text(start + 3), icon: row.text(start + 4), url: row.text(start + 5),
            secret: secret, subject: row.text(start + 6), message: row.text(start + 7),
            callToAction: row.text(start + 8), image: row.text(start + 9))
    }
}

extension SQLiteHeraldStore {
    public func queueBisqPush(_ push: BisqRelayPush) async throws -> Int64 {
        try await write { db in
            let insert = try RawStatement(
                db,
                """
                INSERT INTO push_outbox
                  (sid, wallet, platform, device_token, queued_at, next_attempt_at, bisq_message, bisq_flags)
                VALUES (NULL, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                """)
            insert.bind(1, BisqRelayPush.noWallet)
            insert.bind(2, push.platform.rawValue)
            insert.bind(3, push.deviceToken)
            insert.bind(4, push.now)
            insert.bind(5, push.now)
            insert.bind(6, push.content.message)
            insert.bind(7, push.content.flags)
            guard let id = try insert.integer() else { throw StoreError("queueing a Bisq push returned no id") }
            return id
        }
    }

    public func pushState(id: Int64) async throws -> PushState? {
        try await read { db in
            let select = try RawStatement(db, "SELECT status, attempts, last_error FROM push_outbox WHERE id = ?")
            select.bind(1, id)
            return try select.rows { row in
                PushState(
                    status: row.text(0), attempts: Int(row.integer(1)), lastError: row.isNull(2) ? nil : row.text(2))
            }.first
        }
    }
}

extension SQLiteHeraldStore: OutboxInspection {}
