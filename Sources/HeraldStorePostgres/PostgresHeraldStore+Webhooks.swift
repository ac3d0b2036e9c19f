public import HeraldCore
public import HeraldStore
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
        try await perform { [self] in
            // One statement: the first node to store a key wins, every other reads it.
            let keys = try await client.query(
                """
                WITH inserted AS (
                  INSERT INTO server_keys (name, private_key, created_at)
                  VALUES ('webhook', \(bytea(generated)), extract(epoch FROM now())::bigint)
                  ON CONFLICT (name) DO NOTHING RETURNING private_key)
                SELECT private_key FROM inserted
                UNION ALL SELECT private_key FROM server_keys WHERE name = 'webhook'
                LIMIT 1
                """, logger: logger
            ).rows { try $0.bytes(0) }
            guard let key = keys.first, key.count == 32 else {
                throw StoreError(.corrupt, "the stored webhook key is not 32 bytes")
            }
            return key
        }
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
