public import HeraldCore
public import HeraldStore
import PostgresNIO

extension PostgresHeraldStore {
    public func saveChannel(_ channel: ChannelRecord) async throws {
        try await perform { [self] in
            try await client.query(
                """
                INSERT INTO channels (address, name, icon, url, created_at)
                VALUES (\(bytea(channel.address)), \(channel.name), \(channel.icon), \(channel.url),
                        \(channel.createdAt))
                ON CONFLICT (address) DO UPDATE SET name = excluded.name, icon = excluded.icon, url = excluded.url
                """, logger: logger
            ).rows { _ in () }
        }
    }

    public func removeChannel(_ address: EthereumAddress) async throws -> Bool {
        try await count(
            """
            WITH removed AS (DELETE FROM channels WHERE address = \(bytea(address)) RETURNING 1)
            SELECT count(*) FROM removed
            """
        ) > 0
    }

    public func channel(_ address: EthereumAddress) async throws -> ChannelRecord? {
        try await channels(
            "SELECT address, name, icon, url, created_at FROM channels WHERE address = \(bytea(address))"
        ).first
    }

    public func channels() async throws -> [ChannelRecord] {
        try await channels("SELECT address, name, icon, url, created_at FROM channels ORDER BY name, address")
    }

    private func channels(_ query: PostgresQuery) async throws -> [ChannelRecord] {
        try await perform { [self] in
            try await client.query(query, logger: logger).rows { row in
                ChannelRecord(
                    address: try row.address(0), name: try row.text(1), icon: try row.text(2), url: try row.text(3),
                    createdAt: try row.int(4))
            }
        }
    }

    public func subscriberCount(of channel: EthereumAddress) async throws -> Int {
        try await count("SELECT count(*) FROM subscriptions WHERE channel = \(bytea(channel))")
    }

    public func subscriptions(of subscriber: EthereumAddress) async throws -> [SubscriptionRecord] {
        try await perform { [self] in
            try await client.query(
                """
                SELECT s.channel, c.name, s.since FROM subscriptions s JOIN channels c ON c.address = s.channel
                WHERE s.subscriber = \(bytea(subscriber)) ORDER BY s.since, s.channel
                """, logger: logger
            ).rows { row in
                SubscriptionRecord(channel: try row.address(0), name: try row.text(1), since: try row.int(2))
            }
        }
    }

    // MARK: Pruning, safe on several nodes at once

    public func pruneNonces(expiredBefore cutoff: Int64) async throws -> Int {
        try await deleteInChunks { limit in
            """
            WITH pruned AS (
              DELETE FROM nonces WHERE digest IN
                (SELECT digest FROM nonces WHERE retained_until < \(cutoff) LIMIT \(limit) FOR UPDATE SKIP LOCKED)
              RETURNING 1)
            SELECT count(*) FROM pruned
            """
        }
    }

    /// A scan (no index on last_seen, which would cost every registration an index write); it runs
    /// rarely and in short chunks.
    public func pruneBindings(lastSeenBefore cutoff: Int64) async throws -> Int {
        try await deleteInChunks { limit in
            """
            WITH pruned AS (
              DELETE FROM bindings WHERE (wallet, platform, device_token) IN
                (SELECT wallet, platform, device_token FROM bindings WHERE last_seen < \(cutoff)
                 LIMIT \(limit) FOR UPDATE SKIP LOCKED)
              RETURNING 1)
            SELECT count(*) FROM pruned
            """
        }
    }

    /// Oldest rows first by id (ids grow with queue time), so each chunk finds its rows at once.
    public func pruneFinishedPushes(queuedBefore cutoff: Int64) async throws -> Int {
        try await deleteInChunks { limit in
            """
            WITH pruned AS (
              DELETE FROM push_outbox WHERE id IN
                (SELECT id FROM push_outbox WHERE status <> 'queued' AND queued_at < \(cutoff)
                 ORDER BY id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
              RETURNING 1)
            SELECT count(*) FROM pruned
            """
        }
    }

    /// Deletes in short transactions so that pruning never holds many row locks for long. Rows another
    /// node is pruning (or writing) at the moment are skipped, not waited for: two nodes pruning at once
    /// share the work and count each row once.
    func deleteInChunks(_ chunk: (Int64) -> PostgresQuery) async throws -> Int {
        let limit: Int64 = 5000
        var total = 0
        while true {
            let deleted = try await count(chunk(limit))
            total += deleted
            if deleted < Int(limit) { return total }
        }
    }
}
