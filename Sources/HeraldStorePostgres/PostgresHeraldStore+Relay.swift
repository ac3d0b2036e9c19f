public import HeraldStore
import PostgresNIO

extension PostgresHeraldStore {
    public func addInstallation(_ installation: RelayInstallation) async throws {
        let added = try await count(
            """
            WITH added AS (
              INSERT INTO relay_installations (id, name, key_hash, rate, created_at)
              VALUES (\(installation.id), \(installation.name), \(bytea(installation.keyHash)),
                      \(Int64(installation.rate)), \(installation.createdAt))
              ON CONFLICT (id) DO NOTHING RETURNING 1)
            SELECT count(*) FROM added
            """)
        guard added > 0 else { throw StoreError("an installation \(installation.id) exists already") }
    }

    public func removeInstallation(id: String) async throws -> Bool {
        try await count(
            """
            WITH removed AS (DELETE FROM relay_installations WHERE id = \(id) RETURNING 1)
            SELECT count(*) FROM removed
            """
        ) > 0
    }

    public func installations() async throws -> [RelayInstallation] {
        try await installations(
            "SELECT id, name, key_hash, rate, created_at FROM relay_installations ORDER BY created_at, id")
    }

    public func installation(id: String) async throws -> RelayInstallation? {
        try await installations(
            "SELECT id, name, key_hash, rate, created_at FROM relay_installations WHERE id = \(id)"
        ).first
    }

    private func installations(_ query: PostgresQuery) async throws -> [RelayInstallation] {
        try await perform { [self] in
            try await client.query(query, logger: logger).rows { row in
                RelayInstallation(
                    id: try row.text(0), name: try row.text(1), keyHash: try row.bytes(2), rate: Int(try row.int(3)),
                    createdAt: try row.int(4))
            }
        }
    }

    public func relayTokenSecret(candidate: [UInt8]) async throws -> [UInt8] {
        let secret = try await storedOnce(
            """
            WITH stored AS (
              INSERT INTO relay_secrets (name, secret) VALUES ('access-token', \(bytea(candidate)))
              ON CONFLICT (name) DO NOTHING RETURNING secret)
            SELECT secret FROM stored
            UNION ALL SELECT secret FROM relay_secrets WHERE name = 'access-token'
            LIMIT 1
            """)
        guard let secret else { throw StoreError("the relay's token secret could not be stored") }
        return secret
    }

    /// A value the first node to store it keeps and every other reads: `statement` inserts this node's
    /// candidate unless one is there and answers the stored value (one bytea). Run twice at most: when
    /// another node inserts at the same moment, this statement's insert waits for that commit and does
    /// nothing, and its snapshot, older, cannot see the row; the next statement does.
    func storedOnce(_ statement: PostgresQuery) async throws -> [UInt8]? {
        for _ in 0..<2 {
            let stored = try await perform { [self] in
                try await client.query(statement, logger: logger).rows { try $0.bytes(0) }.first
            }
            if let stored { return stored }
        }
        return nil
    }

    public func countRelayOutcomes(installation: String, _ usage: RelayUsage) async throws {
        guard !usage.isEmpty else { return }
        try await perform { [self] in
            try await client.query(
                """
                INSERT INTO relay_usage (installation, sent, dead, retry, failed)
                SELECT id, \(Int64(usage.sent)), \(Int64(usage.dead)), \(Int64(usage.retry)), \(Int64(usage.failed))
                FROM relay_installations WHERE id = \(installation)
                ON CONFLICT (installation) DO UPDATE SET
                  sent = relay_usage.sent + excluded.sent, dead = relay_usage.dead + excluded.dead,
                  retry = relay_usage.retry + excluded.retry, failed = relay_usage.failed + excluded.failed
                """, logger: logger
            ).rows { _ in () }
        }
    }

    public func relayUsage(installation: String) async throws -> RelayUsage {
        try await perform { [self] in
            try await client.query(
                "SELECT sent, dead, retry, failed FROM relay_usage WHERE installation = \(installation)",
                logger: logger
            ).rows { row in
                RelayUsage(
                    sent: Int(try row.int(0)), dead: Int(try row.int(1)), retry: Int(try row.int(2)),
                    failed: Int(try row.int(3)))
            }.first ?? RelayUsage()
        }
    }
}
