/// Retention (CLI.md: `retention.feedDays`, `retention.feedItemsPerWallet`, `bindingExpiryDays`): what
/// the pruning service deletes so that storage stays bounded. Every method deletes in short
/// transactions of at most `RetentionBatch.rows` rows, so that it never holds the writer long, and is
/// safe on several nodes at once (a row another node is deleting is skipped, never waited for twice).
///
/// A feed item with a push still queued is kept until the push is finished: the push reads the item
/// when it is sent. Finished outbox rows may outlive their item (`pushReport` then knows no such sid).
public protocol RetentionStore: Sendable {
    /// Deletes the items of notifications sent before `cutoff` (Unix milliseconds, the item's `epoch`),
    /// oldest notification first, and those notifications once no item is left.
    func pruneFeedItems(sentBefore cutoff: Int64) async throws -> RetentionCount

    /// For each wallet that received an item with a sid above `after` (looking at the next `limit` sids
    /// only), deletes its items beyond its newest `keep`, and the notifications left without items.
    /// The answer says up to which sid it looked: the next call's `after`.
    func pruneFeedItems(beyondNewest keep: Int, receivedAfter after: Int64, limit: Int) async throws -> FeedTrim

    /// Deletes the keys of wallets that hold no binding, subscription, feed item or channel and whose key
    /// was stored before `cutoff` (Unix seconds). Returns how many.
    func pruneWalletKeys(storedBefore cutoff: Int64) async throws -> Int

    /// Deletes docs/protocol.md §10's per-recipient buckets that were full again before `cutoff` (Unix
    /// milliseconds). A bucket never stored reads as full, so a send finds the same tokens either way;
    /// without this, the table keeps a row for every (channel, wallet) ever sent a type 2, 3 or 4.
    /// Returns how many.
    func pruneWalletBuckets(fullBefore cutoff: Int64) async throws -> Int
}

/// Rows deleted by retention.
public struct RetentionCount: Sendable, Equatable {
    public var feedItems: Int
    public var notifications: Int

    public init(feedItems: Int = 0, notifications: Int = 0) {
        self.feedItems = feedItems
        self.notifications = notifications
    }

    public static func += (lhs: inout RetentionCount, rhs: RetentionCount) {
        lhs.feedItems += rhs.feedItems
        lhs.notifications += rhs.notifications
    }
}

/// What one pass of the per-wallet limit did, and the last sid it looked at.
public struct FeedTrim: Sendable, Equatable {
    public let deleted: RetentionCount
    public let examinedThrough: Int64

    public init(deleted: RetentionCount, examinedThrough: Int64) {
        self.deleted = deleted
        self.examinedThrough = examinedThrough
    }
}

/// How much one retention transaction may delete: a few milliseconds of the writer.
public enum RetentionBatch {
    public static let rows = 1000
}
