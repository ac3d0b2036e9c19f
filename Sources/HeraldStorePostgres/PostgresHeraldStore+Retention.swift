import HeraldCore
public import HeraldStore
import PostgresNIO

/// Retention on PostgreSQL (`RetentionStore`), safe on several nodes at once: a batch locks the items
/// it deletes with `FOR UPDATE SKIP LOCKED`, so two nodes pruning together take different rows and
/// never wait on each other; a notification another node's batch still holds items of is left for the
/// next run, which finds it again (expired notifications are walked on every run).
extension PostgresHeraldStore {
    /// Notifications walked by id, oldest first, stopping at the first one sent at or after the cutoff.
    public func pruneFeedItems(sentBefore cutoff: Int64) async throws -> RetentionCount {
        var deleted = RetentionCount()
        var after: Int64 = 0
        while true {
            let start = after
            let page = try await perform { [self] in
                try await client.query(
                    "SELECT id, epoch FROM notifications WHERE id > \(start) ORDER BY id LIMIT 100", logger: logger
                ).rows { row in (id: try row.int(0), epoch: try row.int(1)) }
            }
            let expired = page.prefix { $0.epoch < cutoff }
            for notification in expired {
                let id = notification.id
                deleted += try await deleteFeedItems(orphanCandidate: id) { limit in
                    """
                    SELECT sid, notification FROM feed_items f WHERE notification = \(id)
                      AND \(unescaped: Self.noQueuedPush) LIMIT \(limit) FOR UPDATE OF f SKIP LOCKED
                    """
                }
            }
            guard expired.count == page.count, let last = page.last else { return deleted }
            after = last.id
        }
    }

    public func pruneFeedItems(
        beyondNewest keep: Int, receivedAfter after: Int64, limit: Int
    ) async throws
        -> FeedTrim
    {
        // One query for the page and every boundary (the newest item past the `keep` newest: it and
        // every older one go): a page of a broadcast names thousands of wallets.
        let rows = try await perform { [self] in
            try await client.query(
                """
                WITH page AS (SELECT sid, recipient FROM feed_items WHERE sid > \(after) ORDER BY sid
                              LIMIT \(Int64(limit))),
                     wallets AS (SELECT DISTINCT recipient FROM page)
                SELECT (SELECT max(sid) FROM page), w.recipient,
                       (SELECT sid FROM feed_items f WHERE f.recipient = w.recipient
                        ORDER BY sid DESC LIMIT 1 OFFSET \(Int64(keep)))
                FROM wallets w
                """, logger: logger
            ).rows { row in (last: try row.int(0), recipient: try row.address(1), boundary: try row.optionalInt(2)) }
        }
        var deleted = RetentionCount()
        for row in rows {
            guard let boundary = row.boundary else { continue }
            let recipient = row.recipient
            deleted += try await deleteFeedItems { limit in
                """
                SELECT sid, notification FROM feed_items f WHERE recipient = \(bytea(recipient)) AND sid <= \(boundary)
                  AND \(unescaped: Self.noQueuedPush) LIMIT \(limit) FOR UPDATE OF f SKIP LOCKED
                """
            }
        }
        return FeedTrim(deleted: deleted, examinedThrough: rows.first?.last ?? after)
    }

    /// A wallet (`k.wallet`) with no binding, subscription, feed item or channel.
    private static let holdsNothing = """
        NOT EXISTS (SELECT 1 FROM bindings b WHERE b.wallet = k.wallet)
          AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.subscriber = k.wallet)
          AND NOT EXISTS (SELECT 1 FROM feed_items f WHERE f.recipient = k.wallet)
          AND NOT EXISTS (SELECT 1 FROM channels c WHERE c.address = k.wallet)
        """

    private static let noQueuedPush =
        "NOT EXISTS (SELECT 1 FROM push_outbox o WHERE o.sid = f.sid AND o.status = 'queued')"

    /// Deletes the items `select` locks, a batch a transaction, and in the same transaction each
    /// notification the batch left without items.
    private func deleteFeedItems(
        orphanCandidate: Int64? = nil, _ select: @escaping @Sendable (Int64) -> PostgresQuery
    ) async throws -> RetentionCount {
        let rows = Int64(RetentionBatch.rows)
        var total = RetentionCount()
        while true {
            let batch = try await perform { [self] in
                try await client.withTransaction(logger: logger) { connection -> RetentionCount in
                    let doomed = try await connection.query(select(rows), logger: logger).rows { row in
                        (sid: try row.int(0), notification: try row.int(1))
                    }
                    let sids = doomed.map(\.sid)
                    var notifications = Set(doomed.map(\.notification))
                    if let orphanCandidate { notifications.insert(orphanCandidate) }
                    let unreadGone = try await connection.query(
                        """
                        WITH gone AS (DELETE FROM feed_items WHERE sid = ANY(\(sids)) RETURNING recipient, read, spam)
                        SELECT recipient, count(*) FROM gone WHERE NOT read AND NOT spam
                        GROUP BY recipient ORDER BY recipient
                        """, logger: logger
                    ).rows { row in (wallet: try row.bytes(0), count: try row.int(1)) }
                    if !unreadGone.isEmpty {
                        // Unread items deleted are taken away from their wallets' numbers (docs/protocol.md
                        // §10; migration 0015), in wallet order.
                        _ = try await connection.query(
                            """
                            INSERT INTO wallet_unread_taken AS t (wallet, taken)
                            SELECT * FROM unnest(\(unreadGone.map { bytea($0.wallet) })::bytea[], \(unreadGone.map(\.count))::bigint[])
                            ORDER BY 1
                            ON CONFLICT (wallet) DO UPDATE SET taken = t.taken + excluded.taken
                            """, logger: logger
                        ).rows { _ in () }
                    }
                    let orphans = try await connection.query(
                        """
                        WITH gone AS (
                          DELETE FROM notifications n WHERE n.id = ANY(\(Array(notifications)))
                            AND NOT EXISTS (SELECT 1 FROM feed_items f WHERE f.notification = n.id)
                          RETURNING 1)
                        SELECT count(*) FROM gone
                        """, logger: logger
                    ).integer()
                    return RetentionCount(feedItems: sids.count, notifications: Int(orphans))
                }
            }
            total += batch
            if batch.feedItems < RetentionBatch.rows { return total }
        }
    }

    /// A walk over `wallet_keys` in key order, a page a transaction. The wallets found idle are locked
    /// with the advisory lock the writer takes for their signatures (in key order, as the writer does),
    /// and checked again under it: a registration committing meanwhile keeps its wallet's key.
    public func pruneWalletKeys(storedBefore cutoff: Int64) async throws -> Int {
        var after: [UInt8] = []
        var total = 0
        while true {
            let start = after
            let (last, deleted) = try await perform { [self] in
                try await client.withTransaction(logger: logger) { connection -> ([UInt8]?, [EthereumAddress]) in
                    let page = try await connection.query(
                        """
                        SELECT wallet FROM wallet_keys WHERE wallet > \(bytea(start))
                        ORDER BY wallet LIMIT \(Int64(RetentionBatch.rows))
                        """, logger: logger
                    ).rows { try $0.bytes(0) }
                    guard let last = page.last else { return (nil, []) }
                    let range = (after: bytea(start), last: bytea(last))
                    let idle = try await connection.query(
                        """
                        SELECT wallet FROM wallet_keys k
                        WHERE k.wallet > \(range.after) AND k.wallet <= \(range.last) AND k.updated_at < \(cutoff)
                          AND \(unescaped: Self.holdsNothing)
                        """, logger: logger
                    ).rows { try $0.address(0) }
                    guard !idle.isEmpty else { return (last, []) }
                    let locks = Array(Set(idle.map(walletLockKey))).sorted()
                    _ = try await connection.query(
                        """
                        SELECT count(pg_advisory_xact_lock(k))
                        FROM (SELECT k FROM unnest(\(locks)::bigint[]) AS t(k) ORDER BY k) s
                        """, logger: logger
                    ).rows { _ in () }
                    // Checked again under the locks, on a fresh snapshot (READ COMMITTED: each statement).
                    let deleted = try await connection.query(
                        """
                        DELETE FROM wallet_keys k
                        WHERE k.wallet > \(range.after) AND k.wallet <= \(range.last) AND k.updated_at < \(cutoff)
                          AND \(unescaped: Self.holdsNothing)
                        RETURNING k.wallet
                        """, logger: logger
                    ).rows { try $0.address(0) }
                    return (last, deleted)
                }
            }
            writer.knownKeys.remove(deleted)
            total += deleted.count
            guard let last else { return total }
            after = last
        }
    }

    /// A walk over `wallet_buckets` in key order, a page a statement. A send that takes from a bucket
    /// meanwhile either wrote first (its new `full_at` is ahead of the cutoff: the row stays, since the
    /// DELETE checks `full_at` again on the row it locks) or finds no row, which reads as the same full
    /// bucket.
    public func pruneWalletBuckets(fullBefore cutoff: Int64) async throws -> Int {
        var after: (channel: [UInt8], wallet: [UInt8]) = ([], [])
        var total = 0
        while true {
            let from = after
            let (last, deleted) = try await perform { [self] in
                try await client.withConnection { connection -> ((channel: [UInt8], wallet: [UInt8])?, Int) in
                    let page = try await connection.query(
                        """
                        SELECT channel, wallet FROM wallet_buckets
                        WHERE (channel, wallet) > (\(bytea(from.channel)), \(bytea(from.wallet)))
                        ORDER BY channel, wallet LIMIT \(Int64(RetentionBatch.rows))
                        """, logger: logger
                    ).rows { (channel: try $0.bytes(0), wallet: try $0.bytes(1)) }
                    guard let last = page.last else { return (nil, 0) }
                    let deleted = try await connection.query(
                        """
                        DELETE FROM wallet_buckets
                        WHERE (channel, wallet) > (\(bytea(from.channel)), \(bytea(from.wallet)))
                          AND (channel, wallet) <= (\(bytea(last.channel)), \(bytea(last.wallet)))
                          AND full_at < \(cutoff)
                        RETURNING 1
                        """, logger: logger
                    ).rows { _ in true }
                    return (last, deleted.count)
                }
            }
            total += deleted
            guard let last else { return total }
            after = last
        }
    }
}
