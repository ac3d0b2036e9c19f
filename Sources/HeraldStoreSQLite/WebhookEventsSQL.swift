import GRDB
import HeraldCore
import HeraldStore

/// Queues docs/protocol.md §11.3's events in the transaction of their cause: what `WebhookEventPlanner`
/// decided from the channel's webhook, read here.
enum WebhookEventsSQL {
    /// The events a channel's webhook asks for; nil without a webhook.
    static func events(of channel: EthereumAddress, in db: Database) throws -> WebhookEventSet? {
        try WebhooksSQL.webhook(of: channel, in: db)?.events
    }

    static func queue(_ event: WebhookEvent?, at now: Int64, in db: Database) throws {
        guard let event else { return }
        try RawStatement(
            db, "INSERT INTO webhook_events (channel, kind, fields, queued_at) VALUES (?, ?, ?, ?)",
            .address(event.channel), .text(event.kind.rawValue), .text(event.fields), .integer(now)
        ).execute()
    }

    /// A `failed` event for each of these pushes (just recorded failed or pruned) that belongs to a
    /// notification whose channel's webhook asks for them; setup confirmations, Bisq and read-sync pushes
    /// have no notification and make none.
    static func queueFailed(ids: [Int64], reason: String, at now: Int64, in db: Database) throws {
        guard !ids.isEmpty else { return }
        let ids = JSONValue.array(ids.map { .number(String($0)) }).jsonText
        let rows = try RawStatement(
            db,
            """
            SELECT n.channel, o.sid, o.wallet, o.platform, w.events
            FROM push_outbox o JOIN feed_items i ON i.sid = o.sid JOIN notifications n ON n.id = i.notification
              JOIN webhooks w ON w.channel = n.channel
            WHERE o.id IN (SELECT value FROM json_each(?)) ORDER BY o.id
            """, .text(ids)
        ).rows { row -> (UnsentPush, WebhookEventSet) in
            guard let platform = Platform(rawValue: row.text(3)) else {
                throw StoreError(.corrupt, "unknown platform in push_outbox")
            }
            let push = UnsentPush(
                channel: try EthereumAddress(bytes: row.blob(0)), sid: row.integer(1),
                recipient: try EthereumAddress(bytes: row.blob(2)), platform: platform, reason: reason)
            return (push, try WebhooksSQL.stored(row.text(4)))
        }
        for (push, events) in rows {
            try queue(WebhookEventPlanner.event(for: push, at: now, webhook: events), at: now, in: db)
        }
    }
}
