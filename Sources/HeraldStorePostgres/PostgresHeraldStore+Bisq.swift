public import HeraldStore
import PostgresNIO

extension PostgresHeraldStore {
    /// One autocommitted insert: durable when it returns (PostgreSQL's `synchronous_commit` default).
    public func queueBisqPush(_ push: BisqRelayPush) async throws -> Int64 {
        let flags = Int16(push.content.flags)
        return try await perform { [self] in
            let ids = try await client.query(
                """
                INSERT INTO push_outbox
                  (sid, wallet, platform, device_token, queued_at, next_attempt_at, bisq_message, bisq_flags)
                VALUES (NULL, \(bytea(BisqRelayPush.noWallet)), \(push.platform.rawValue), \(push.deviceToken),
                        \(push.now), \(push.now), \(push.content.message), \(flags))
                RETURNING id
                """, logger: logger
            ).rows { try $0.int(0) }
            guard let id = ids.first else { throw StoreError("queueing a Bisq push returned no id") }
            return id
        }
    }

    public func pushState(id: Int64) async throws -> PushState? {
        try await perform { [self] in
            try await client.query(
                "SELECT status, attempts, last_error FROM push_outbox WHERE id = \(id)", logger: logger
            ).rows { row in
                PushState(status: try row.text(0), attempts: Int(try row.int(1)), lastError: try row.optionalText(2))
            }.first
        }
    }
}
