public import HeraldCore
public import HeraldStore
import Logging
import PostgresNIO

extension PostgresHeraldStore {
    public func apply(_ change: WebhookChange) async throws -> WebhookOutcome {
        try await control(.webhook(change)) { $0.webhook }
    }

    public func webhook(of channel: EthereumAddress) async throws -> WebhookRecord? {
        try await perform { [self] in
            try await client.query(
                "SELECT url, events FROM webhooks WHERE channel = \(bytea(channel))", logger: logger
            ).rows { row in
                WebhookRecord(channel: channel, url: try row.text(0), events: try PostgresWebhooks.stored(row.text(1)))
            }.first
        }
    }

    public func webhookKey(generated: [UInt8]) async throws -> [UInt8] {
        // The first node to store a key wins, every other reads it.
        let key = try await storedOnce(
            """
            WITH inserted AS (
              INSERT INTO server_keys (name, private_key, created_at)
              VALUES ('webhook', \(bytea(generated)), extract(epoch FROM now())::bigint)
              ON CONFLICT (name) DO NOTHING RETURNING private_key)
            SELECT private_key FROM inserted
            UNION ALL SELECT private_key FROM server_keys WHERE name = 'webhook'
            LIMIT 1
            """)
        guard let key else { throw StoreError("the webhook key was neither stored nor found") }
        guard key.count == 32 else { throw StoreError(.corrupt, "the stored webhook key is not 32 bytes") }
        return key
    }
}

extension PostgresHeraldStore {
    public func claimWebhookBatch(
        now: Int64, maxAgeSeconds: Int64, owner: String, leaseUntil: Int64, limit: Int
    ) async throws -> WebhookBatch? {
        try await perform { [self] in
            try await client.withTransaction(logger: logger) { connection in
                // SKIP LOCKED: another node claiming a webhook at this moment is passed over, not waited for.
                let due = try await connection.query(
                    """
                    UPDATE webhooks SET claimed_until = \(leaseUntil), claimed_by = \(owner)
                    WHERE channel = (
                      SELECT w.channel FROM webhooks w
                      WHERE (w.claimed_until IS NULL OR w.claimed_until <= \(now)) AND w.next_attempt_at <= \(now)
                        AND EXISTS (SELECT 1 FROM webhook_events e WHERE e.channel = w.channel)
                      ORDER BY w.next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
                    RETURNING channel, url, attempts
                    """, logger: logger
                ).rows { (try $0.address(0), try $0.text(1), Int(try $0.int(2))) }.first
                guard let (channel, url, attempts) = due else { return nil as WebhookBatch? }
                // Events past their max age go unsent: looked for at the head of the queue, where the
                // oldest are, so that a claim costs a batch, not the whole queue.
                var events: [QueuedWebhookEvent] = []
                while events.isEmpty {
                    let head = try await connection.query(
                        """
                        SELECT id, kind, fields, queued_at FROM webhook_events WHERE channel = \(bytea(channel))
                        ORDER BY id LIMIT \(Int64(limit))
                        """, logger: logger
                    ).rows { row -> QueuedWebhookEvent in
                        guard let kind = WebhookEventKind(rawValue: try row.text(1)) else {
                            throw StoreError(.corrupt, "unknown webhook event kind")
                        }
                        return QueuedWebhookEvent(
                            id: try row.int(0), kind: kind, fields: try row.text(2), queuedAt: try row.int(3))
                    }
                    guard !head.isEmpty else { break }
                    let (expired, due) = WebhookPlanner.split(head, now: now, maxAgeSeconds: maxAgeSeconds)
                    if !expired.isEmpty {
                        try await connection.query(
                            "DELETE FROM webhook_events WHERE id = ANY(\(expired)::bigint[])", logger: logger)
                    }
                    events = due
                }
                guard !events.isEmpty else {
                    try await connection.query(
                        "UPDATE webhooks SET claimed_until = NULL, claimed_by = NULL WHERE channel = \(bytea(channel))",
                        logger: logger)
                    return nil
                }
                return WebhookBatch(channel: channel, url: url, attempts: attempts, events: events)
            }
        }
    }

    public func record(_ outcome: WebhookDeliveryOutcome, owner: String) async throws {
        try await perform { [self] in
            try await client.withTransaction(logger: logger) { connection in
                switch outcome {
                case .delivered(let channel, let through), .dropped(let channel, let through):
                    try await connection.query(
                        "DELETE FROM webhook_events WHERE channel = \(bytea(channel)) AND id <= \(through)",
                        logger: logger)
                    try await connection.query(
                        """
                        UPDATE webhooks SET attempts = 0, next_attempt_at = 0, claimed_until = NULL, claimed_by = NULL
                        WHERE channel = \(bytea(channel)) AND claimed_by = \(owner)
                        """, logger: logger)
                case .retry(let channel, let at):
                    try await connection.query(
                        """
                        UPDATE webhooks SET attempts = attempts + 1, next_attempt_at = \(at), claimed_until = NULL,
                          claimed_by = NULL
                        WHERE channel = \(bytea(channel)) AND claimed_by = \(owner)
                        """, logger: logger)
                case .removed(let channel):
                    try await connection.query(
                        "DELETE FROM webhooks WHERE channel = \(bytea(channel))", logger: logger)
                    try await connection.query(
                        "DELETE FROM webhook_events WHERE channel = \(bytea(channel))", logger: logger)
                }
            }
        }
    }

    public func queuedWebhookEventCount() async throws -> Int {
        try await count("SELECT count(*) FROM webhook_events")
    }
}

enum PostgresWebhooks {
    static func stored(_ text: String) throws -> WebhookEventSet {
        do { return try WebhookEventSet.stored(text) } catch {
            throw StoreError(.corrupt, "a webhook's stored events do not parse: \(error.message)")
        }
    }
}

/// docs/protocol.md §11.3's Webhook, under the channel's advisory lock.
extension PostgresWriteSQL {
    /// nil: the nonce was spent meanwhile (by another node: this insert waited for its commit).
    mutating func apply(_ change: WebhookChange, nonce: NonceSpend) async throws -> SubscriberControlOutcome? {
        let channel = bytea(change.channel)
        let facts = try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM channels WHERE address = \(channel)),
                   (SELECT events FROM webhooks WHERE channel = \(channel))
            """, logger: logger
        ).rows { (try $0.bool(0), try $0.optionalText(1)) }.first
        guard let (exists, currentText) = facts else { throw StoreError("the webhook facts returned no row") }
        let plan = WebhookPlanner.plan(
            change, channelExists: exists, current: try currentText.map(PostgresWebhooks.stored))
        guard case .applied = plan.answer else { return .webhook(plan.answer) }
        guard try await spend(nonce, answer: nil) else { return nil }
        switch plan {
        case .save(let dropKinds):
            try await run(
                """
                INSERT INTO webhooks (channel, url, events, updated_at)
                VALUES (\(channel), \(change.url), \(change.events.text), \(change.signed.now))
                ON CONFLICT (channel) DO UPDATE SET url = excluded.url, events = excluded.events,
                  updated_at = excluded.updated_at, next_attempt_at = 0, attempts = 0
                """)
            if !dropKinds.isEmpty {
                try await run(
                    """
                    DELETE FROM webhook_events WHERE channel = \(channel) AND kind = ANY(\(dropKinds.map(\.rawValue))::text[])
                    """)
            }
        case .delete:
            try await run("DELETE FROM webhooks WHERE channel = \(channel)")
            try await run("DELETE FROM webhook_events WHERE channel = \(channel)")
        case .keepAbsent, .refuseUnknownChannel:
            break
        }
        return .webhook(plan.answer)
    }
}

/// Queues docs/protocol.md §11.3's events in the transaction of their cause.
extension PostgresWriteSQL {
    func queue(_ event: WebhookEvent?, at now: Int64) async throws {
        guard let event else { return }
        try await PostgresWebhooks.queue([event], at: now, on: connection, logger: logger)
    }
}

extension PostgresWebhooks {
    static func queue(
        _ events: [WebhookEvent], at now: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !events.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO webhook_events (channel, kind, fields, queued_at)
            SELECT e.channel, e.kind, e.fields, \(now)
            FROM unnest(\(events.map { bytea($0.channel) })::bytea[], \(events.map(\.kind.rawValue))::text[],
                        \(events.map(\.fields))::text[]) WITH ORDINALITY AS e(channel, kind, fields, position)
            ORDER BY e.position
            """, logger: logger)
    }

    /// A `failed` event for each of these pushes (just recorded failed or pruned, with their reasons) that
    /// belongs to a notification whose channel's webhook asks for them.
    static func queueFailed(
        _ unsent: [(id: Int64, reason: String)], at now: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !unsent.isEmpty else { return }
        let reasons = Dictionary(unsent.map { ($0.id, $0.reason) }, uniquingKeysWith: { _, last in last })
        let rows = try await connection.query(
            """
            SELECT o.id, n.channel, o.sid, o.wallet, o.platform, w.events
            FROM push_outbox o JOIN feed_items i ON i.sid = o.sid JOIN notifications n ON n.id = i.notification
              JOIN webhooks w ON w.channel = n.channel
            WHERE o.id = ANY(\(unsent.map(\.id))::bigint[]) ORDER BY o.id
            """, logger: logger
        ).rows { row -> WebhookEvent? in
            let push = UnsentPush(
                channel: try row.address(1), sid: try row.int(2), recipient: try row.address(3),
                platform: try row.platform(4), reason: reasons[try row.int(0)] ?? "failed")
            return WebhookEventPlanner.event(for: push, at: now, webhook: try stored(row.text(5)))
        }
        let events = rows.compactMap { $0 }
        guard !events.isEmpty else { return }
        // The channels' locks, in key order, as a Subscription's batch takes them: a channel's events then
        // commit in the order of their ids, whichever node queues them.
        try await PostgresWriteSQL.lock(events.map(\.channel), on: connection, logger: logger)
        try await queue(events, at: now, on: connection, logger: logger)
    }
}
