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
