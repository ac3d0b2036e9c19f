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
            WITH removed AS (DELETE FROM channels WHERE address = \(bytea(address)) RETURNING 1),
            events AS (DELETE FROM webhook_events WHERE channel = \(bytea(address)))
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
            let wallet = bytea(subscriber)
            // The wallet's unread items per channel (entries of `feed_items_unread`), and its choices.
            let unread = try await client.query(
                """
                SELECT n.channel, count(*) FROM feed_items f JOIN notifications n ON n.id = f.notification
                WHERE f.recipient = \(wallet) AND NOT f.read AND NOT f.spam GROUP BY n.channel
                """, logger: logger
            ).rows { (try $0.address(0), Int(try $0.int(1))) }
            let unreadByChannel = Dictionary(unread, uniquingKeysWith: +)
            let choices = try await client.query(
                "SELECT channel, setting, value FROM subscriber_choices WHERE subscriber = \(wallet)", logger: logger
            ).rows { (try $0.address(0), try $0.text(1), try $0.int(2)) }
            let choicesByChannel = Dictionary(grouping: choices, by: \.0).mapValues { rows in
                Dictionary(rows.map { ($0.1, $0.2) }, uniquingKeysWith: { _, last in last })
            }
            let rows = try await client.query(
                """
                SELECT s.channel, c.name, s.since, c.settings, s.muted_until
                FROM subscriptions s JOIN channels c ON c.address = s.channel
                WHERE s.subscriber = \(wallet) ORDER BY s.since, s.channel
                """, logger: logger
            ).rows { (try $0.address(0), try $0.text(1), try $0.int(2), try $0.text(3), try $0.int(4)) }
            return try rows.map { channel, name, since, settings, mutedUntil in
                let list = try PostgresControlReads.stored(settings)
                return SubscriptionRecord(
                    channel: channel, name: name, since: since, unread: unreadByChannel[channel] ?? 0,
                    settings: EffectiveSetting.resolve(list, choices: choicesByChannel[channel] ?? [:]),
                    mutedUntil: mutedUntil)
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
