import Foundation
import GRDB
import HeraldCore
public import HeraldStore

/// Retention on SQLite (`RetentionStore`): each transaction deletes at most `RetentionBatch.rows` items
/// through the write lock, then gives it up, so registrations wait for one short batch at most.
extension SQLiteHeraldStore {
    /// Notifications are walked by id, oldest first, and the walk stops at the first one sent at or
    /// after the cutoff (ids grow with time): a run costs what it deletes, never a scan of the rest.
    public func pruneFeedItems(sentBefore cutoff: Int64) async throws -> RetentionCount {
        var deleted = RetentionCount()
        var after: Int64 = 0
        while true {
            let from = after
            let page = try await read { db in
                try Row.fetchAll(
                    db, sql: "SELECT id, epoch FROM notifications WHERE id > ? ORDER BY id LIMIT 100",
                    arguments: [from]
                ).map { row -> (id: Int64, epoch: Int64) in (row[0], row[1]) }
            }
            let expired = page.prefix { $0.epoch < cutoff }
            for notification in expired {
                deleted += try await deleteFeedItems(.ofNotification(notification.id))
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
        // One read for the page and every boundary: a page of a broadcast names thousands of wallets.
        let (overLimit, last) = try await read { db -> ([(Data, Int64)], Int64) in
            let rows = try Row.fetchAll(
                db, sql: "SELECT sid, recipient FROM feed_items WHERE sid > ? ORDER BY sid LIMIT ?",
                arguments: [after, limit])
            var seen = Set<Data>()
            var overLimit: [(Data, Int64)] = []
            let boundary = try db.cachedStatement(
                sql: "SELECT sid FROM feed_items WHERE recipient = ? ORDER BY sid DESC LIMIT 1 OFFSET ?")
            for row in rows {
                let recipient: Data = row[1]
                guard seen.insert(recipient).inserted else { continue }
                // The newest item past the `keep` newest: it and every older one go.
                if let sid = try Int64.fetchOne(boundary, arguments: [recipient, keep]) {
                    overLimit.append((recipient, sid))
                }
            }
            return (overLimit, rows.last.map { row -> Int64 in row[0] } ?? after)
        }
        var deleted = RetentionCount()
        for (recipient, boundary) in overLimit {
            deleted += try await deleteFeedItems(.ofRecipient(recipient, through: boundary))
        }
        return FeedTrim(deleted: deleted, examinedThrough: last)
    }

    /// Which items a deletion takes.
    private enum FeedItemSelection: Sendable {
        /// Every item of a notification; the notification goes too once none is left (even if it
        /// never had any).
        case ofNotification(Int64)
        /// A wallet's items up to a sid.
        case ofRecipient(Data, through: Int64)

        var clause: String {
            switch self {
            case .ofNotification: return "notification = ?"
            case .ofRecipient: return "recipient = ? AND sid <= ?"
            }
        }

        var arguments: StatementArguments {
            switch self {
            case .ofNotification(let id): return [id]
            case .ofRecipient(let wallet, let sid): return [wallet, sid]
            }
        }

        var orphanCandidate: Int64? {
            if case .ofNotification(let id) = self { return id }
            return nil
        }
    }

    /// Deletes the items selected (except those with a push still queued), a batch a transaction, and
    /// in the same transaction each notification the batch left without items.
    private func deleteFeedItems(_ selection: FeedItemSelection) async throws -> RetentionCount {
        var total = RetentionCount()
        while true {
            let batch = try await write { db -> RetentionCount in
                let (clause, arguments, orphanCandidate) =
                    (selection.clause, selection.arguments, selection.orphanCandidate)
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT sid, notification, recipient, read = 0 AND spam = 0 FROM feed_items f WHERE \(clause)
                          AND NOT EXISTS (SELECT 1 FROM push_outbox o WHERE o.sid = f.sid AND o.status = 'queued')
                        LIMIT \(RetentionBatch.rows)
                        """, arguments: arguments)
                let sids = rows.map { row -> Int64 in row[0] }
                var notifications = Set(rows.map { row -> Int64 in row[1] })
                if let orphanCandidate { notifications.insert(orphanCandidate) }
                try db.execute(
                    sql: "DELETE FROM feed_items WHERE sid IN (SELECT value FROM json_each(?))",
                    arguments: [Self.jsonArray(sids)])
                // The unread items deleted leave their wallets' numbers (UnreadCounterSQL).
                var unreadGone: [Data: Int64] = [:]
                for row in rows where (row[3] as Int64) != 0 { unreadGone[row[2] as Data, default: 0] += 1 }
                for (wallet, count) in unreadGone {
                    try UnreadCounterSQL.add(-count, to: try EthereumAddress(bytes: Array(wallet)), in: db)
                }
                try db.execute(
                    sql: """
                        DELETE FROM notifications WHERE id IN (SELECT value FROM json_each(?))
                          AND NOT EXISTS (SELECT 1 FROM feed_items f WHERE f.notification = notifications.id)
                        """, arguments: [Self.jsonArray(Array(notifications))])
                return RetentionCount(feedItems: sids.count, notifications: db.changesCount)
            }
            total += batch
            if batch.feedItems < RetentionBatch.rows { return total }
        }
    }

    /// A walk over `wallet_keys` in key order, a page a transaction: no index on `updated_at` (it would
    /// cost every new wallet a second index write), so this runs with the hourly binding sweep.
    public func pruneWalletKeys(storedBefore cutoff: Int64) async throws -> Int {
        // One zero byte sorts before every 20-byte wallet (an empty blob would bind as NULL).
        var from = Data([0])
        var total = 0
        while true {
            let after = from
            let (last, deleted) = try await write { db -> (Data?, [Data]) in
                let page = try Data.fetchAll(
                    db, sql: "SELECT wallet FROM wallet_keys WHERE wallet > ? ORDER BY wallet LIMIT ?",
                    arguments: [after, RetentionBatch.rows])
                guard let last = page.last else { return (nil, []) }
                let idle = try Data.fetchAll(
                    db,
                    sql: """
                        SELECT wallet FROM wallet_keys k WHERE k.wallet > ? AND k.wallet <= ? AND k.updated_at < ?
                          AND NOT EXISTS (SELECT 1 FROM bindings b WHERE b.wallet = k.wallet)
                          AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.subscriber = k.wallet)
                          AND NOT EXISTS (SELECT 1 FROM feed_items f WHERE f.recipient = k.wallet)
                          AND NOT EXISTS (SELECT 1 FROM channels c WHERE c.address = k.wallet)
                        """, arguments: [after, last, cutoff])
                for wallet in idle {
                    try db.execute(sql: "DELETE FROM wallet_keys WHERE wallet = ?", arguments: [wallet])
                }
                return (last, idle)
            }
            writer.knownKeys.remove(deleted.compactMap { try? EthereumAddress(bytes: Array($0)) })
            total += deleted.count
            guard let last else { return total }
            from = last
        }
    }

    /// A walk over `wallet_buckets` in key order, a page a transaction (no index on `full_at`: it would
    /// cost every send a second index write per recipient), so this runs with the hourly binding sweep.
    public func pruneWalletBuckets(fullBefore cutoff: Int64) async throws -> Int {
        // One zero byte sorts before every 20-byte address (an empty blob would bind as NULL).
        var after = (channel: Data([0]), wallet: Data([0]))
        var total = 0
        while true {
            let from = after
            let (last, deleted) = try await write { db -> ((channel: Data, wallet: Data)?, Int) in
                let page = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT channel, wallet FROM wallet_buckets WHERE (channel, wallet) > (?, ?)
                        ORDER BY channel, wallet LIMIT ?
                        """, arguments: [from.channel, from.wallet, RetentionBatch.rows])
                guard let row = page.last else { return (nil, 0) }
                let last: (channel: Data, wallet: Data) = (row[0], row[1])
                try db.execute(
                    sql: """
                        DELETE FROM wallet_buckets
                        WHERE (channel, wallet) > (?, ?) AND (channel, wallet) <= (?, ?) AND full_at < ?
                        """, arguments: [from.channel, from.wallet, last.channel, last.wallet, cutoff])
                return (last, db.changesCount)
            }
            total += deleted
            guard let last else { return total }
            after = last
        }
    }
}
