import Foundation
import GRDB
public import HeraldCore
public import HeraldStore

extension SQLiteHeraldStore {
    public func apply(_ change: WebhookChange) async throws -> WebhookOutcome {
        guard case .control(let answer) = try await writer.submit(.control(.webhook(change))),
            let outcome = answer.webhook
        else { throw StoreError("the writer answered a Webhook with another kind of outcome") }
        return outcome
    }

    public func webhook(of channel: EthereumAddress) async throws -> WebhookRecord? {
        try await read { db in try WebhooksSQL.webhook(of: channel, in: db) }
    }

    public func webhookKey(generated: [UInt8]) async throws -> [UInt8] {
        try await write { db in
            try RawStatement(
                db,
                "INSERT INTO server_keys (name, private_key, created_at) VALUES ('webhook', ?, ?) ON CONFLICT DO NOTHING",
                .blob(generated), .integer(Int64(Date().timeIntervalSince1970))
            ).execute()
            let keys = try RawStatement(db, "SELECT private_key FROM server_keys WHERE name = 'webhook'").rows {
                $0.blob(0)
            }
            guard let key = keys.first, key.count == 32 else {
                throw StoreError(.corrupt, "the stored webhook key is not 32 bytes")
            }
            return key
        }
    }
}

extension SQLiteHeraldStore {
    public func claimWebhookBatch(
        now: Int64, maxAgeSeconds: Int64, owner: String, leaseUntil: Int64, limit: Int
    ) async throws -> WebhookBatch? {
        try await groupedWrite { db in
            let due = try RawStatement(
                db,
                """
                SELECT w.channel, w.url, w.attempts FROM webhooks w
                WHERE (w.claimed_until IS NULL OR w.claimed_until <= ?) AND w.next_attempt_at <= ?
                  AND EXISTS (SELECT 1 FROM webhook_events e WHERE e.channel = w.channel)
                ORDER BY w.next_attempt_at LIMIT 1
                """, .integer(now), .integer(now)
            ).rows { (try EthereumAddress(bytes: $0.blob(0)), $0.text(1), Int($0.integer(2))) }.first
            guard let (channel, url, attempts) = due else { return nil as WebhookBatch? }
            try RawStatement(
                db, "UPDATE webhooks SET claimed_until = ?, claimed_by = ? WHERE channel = ?", .integer(leaseUntil),
                .text(owner), .address(channel)
            ).execute()
            // Events past their max age go unsent: looked for at the head of the queue, where the oldest
            // are, so that a claim costs a batch, not the whole queue.
            var events: [QueuedWebhookEvent] = []
            while events.isEmpty {
                let head = try RawStatement(
                    db, "SELECT id, kind, fields, queued_at FROM webhook_events WHERE channel = ? ORDER BY id LIMIT ?",
                    .address(channel), .integer(Int64(limit))
                ).rows { row -> QueuedWebhookEvent in
                    guard let kind = WebhookEventKind(rawValue: row.text(1)) else {
                        throw StoreError(.corrupt, "unknown webhook event kind")
                    }
                    return QueuedWebhookEvent(
                        id: row.integer(0), kind: kind, fields: row.text(2), queuedAt: row.integer(3))
                }
                guard !head.isEmpty else { break }
                let (expired, due) = WebhookPlanner.split(head, now: now, maxAgeSeconds: maxAgeSeconds)
                if !expired.isEmpty {
                    try RawStatement(
                        db, "DELETE FROM webhook_events WHERE id IN (SELECT value FROM json_each(?))",
                        .text(JSONValue.array(expired.map { .number(String($0)) }).jsonText)
                    ).execute()
                }
                events = due
            }
            guard !events.isEmpty else {
                try RawStatement(
                    db, "UPDATE webhooks SET claimed_until = NULL, claimed_by = NULL WHERE channel = ?",
                    .address(channel)
                ).execute()
                return nil
            }
            return WebhookBatch(channel: channel, url: url, attempts: attempts, events: events)
        }
    }

    public func record(_ outcome: WebhookDeliveryOutcome, owner: String) async throws {
        try await groupedWrite { db in
            switch outcome {
            case .delivered(let channel, let through), .dropped(let channel, let through):
                try RawStatement(
                    db, "DELETE FROM webhook_events WHERE channel = ? AND id <= ?", .address(channel),
                    .integer(through)
                ).execute()
                try RawStatement(
                    db,
                    """
                    UPDATE webhooks SET attempts = 0, next_attempt_at = 0, claimed_until = NULL, claimed_by = NULL
                    WHERE channel = ? AND claimed_by = ?
                    """, .address(channel), .text(owner)
                ).execute()
            case .retry(let channel, let at):
                try RawStatement(
                    db,
                    """
                    UPDATE webhooks SET attempts = attempts + 1, next_attempt_at = ?, claimed_until = NULL,
                      claimed_by = NULL
                    WHERE channel = ? AND claimed_by = ?
                    """, .integer(at), .address(channel), .text(owner)
                ).execute()
            case .removed(let channel):
                try RawStatement(db, "DELETE FROM webhooks WHERE channel = ?", .address(channel)).execute()
                try RawStatement(db, "DELETE FROM webhook_events WHERE channel = ?", .address(channel)).execute()
            }
        }
    }

    public func queuedWebhookEventCount() async throws -> Int {
        try await read { db in Int(try RawStatement(db, "SELECT COUNT(*) FROM webhook_events").integer() ?? 0) }
    }
}

/// docs/protocol.md §11.3 on SQLite: a Webhook change in the writer's transaction, which the single writer
/// orders with the events it drops.
enum WebhooksSQL {
    static func webhook(of channel: EthereumAddress, in db: Database) throws -> WebhookRecord? {
        try RawStatement(db, "SELECT url, events FROM webhooks WHERE channel = ?", .address(channel)).rows { row in
            WebhookRecord(channel: channel, url: row.text(0), events: try stored(row.text(1)))
        }.first
    }

    static func stored(_ text: String) throws -> WebhookEventSet {
        do { return try WebhookEventSet.stored(text) } catch {
            throw StoreError(.corrupt, "a webhook's stored events do not parse: \(error.message)")
        }
    }

    /// What `WebhookPlanner` needs, read in the writer's transaction.
    static func plan(_ change: WebhookChange, in db: Database) throws -> WebhookPlan {
        let exists =
            try RawStatement(db, "SELECT 1 FROM channels WHERE address = ?", .address(change.channel)).integer() != nil
        let current = try webhook(of: change.channel, in: db)?.events
        return WebhookPlanner.plan(change, channelExists: exists, current: current)
    }

    static func write(_ plan: WebhookPlan, _ change: WebhookChange, in db: Database) throws {
        let channel = RawValue.address(change.channel)
        switch plan {
        case .save(let dropKinds):
            try RawStatement(
                db,
                """
                INSERT INTO webhooks (channel, url, events, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (channel) DO UPDATE SET url = excluded.url, events = excluded.events,
                  updated_at = excluded.updated_at, next_attempt_at = 0, attempts = 0
                """, channel, .text(change.url), .text(change.events.text), .integer(change.signed.now)
            ).execute()
            for kind in dropKinds {
                try RawStatement(
                    db, "DELETE FROM webhook_events WHERE channel = ? AND kind = ?", channel, .text(kind.rawValue)
                ).execute()
            }
        case .delete:
            try RawStatement(db, "DELETE FROM webhooks WHERE channel = ?", channel).execute()
            try RawStatement(db, "DELETE FROM webhook_events WHERE channel = ?", channel).execute()
        case .keepAbsent, .refuseUnknownChannel:
            break
        }
    }
}
