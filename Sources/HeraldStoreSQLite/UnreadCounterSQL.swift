import GRDB
import HeraldCore
import HeraldStore

/// A wallet's unread items that are not spam, as the number in `wallet_unread` (docs/protocol.md §10,
/// migration 0012): each write that stores, marks or deletes such an item changes it in its own
/// transaction, so a badge is one key read instead of a count of the wallet's unread items.
enum UnreadCounterSQL {
    /// The badge of a push queued after its item was counted: NULL for the other platforms, and when
    /// badges are off (`flag` 0).
    static func badge(_ flag: String, wallet: String, platform: String) -> String {
        """
        CASE WHEN \(flag) = 1 AND (\(platform) = 'ios' OR \(platform) = 'ios-sandbox')
             THEN (SELECT unread FROM wallet_unread u WHERE u.wallet = \(wallet)) END
        """
    }

    /// The same with the number already joined in (`unread`, a column of the statement).
    static func badge(_ flag: String, unread: String, platform: String) -> String {
        "CASE WHEN \(flag) = 1 AND (\(platform) = 'ios' OR \(platform) = 'ios-sandbox') THEN \(unread) END"
    }

    static func unread(of wallet: EthereumAddress, in db: Database) throws -> Int {
        Int(
            try RawStatement(db, "SELECT unread FROM wallet_unread WHERE wallet = ?", .address(wallet)).integer() ?? 0)
    }

    /// Adds `count` (negative to take away, from a row that is there: an unread item counted it) to the
    /// wallet's number.
    static func add(_ count: Int64, to wallet: EthereumAddress, in db: Database) throws {
        guard count != 0 else { return }
        guard count > 0 else {
            try RawStatement(
                db, "UPDATE wallet_unread SET unread = unread + ? WHERE wallet = ?", .integer(count), .address(wallet)
            ).execute()
            return
        }
        try RawStatement(
            db,
            """
            INSERT INTO wallet_unread (wallet, unread) VALUES (?, ?)
            ON CONFLICT (wallet) DO UPDATE SET unread = unread + excluded.unread
            """, .address(wallet), .integer(count)
        ).execute()
    }

    /// One more for the recipient of each item in `first...last`: a broadcast's items, none of them spam
    /// and no two for one wallet, inserted in wallet order (so these writes walk the table's keys in order).
    static func addOneForEachItem(_ first: Int64, through last: Int64, in db: Database) throws {
        try RawStatement(
            db,
            """
            INSERT INTO wallet_unread (wallet, unread)
            SELECT recipient, 1 FROM feed_items WHERE sid BETWEEN ? AND ?
            ON CONFLICT (wallet) DO UPDATE SET unread = unread + 1
            """, .integer(first), .integer(last)
        ).execute()
    }
}
