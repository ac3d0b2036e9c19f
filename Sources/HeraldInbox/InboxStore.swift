import Foundation
import GRDB
public import HeraldCore

/// The subscriber's cache: `$HERALD_HOME/inbox.sqlite`, table `feed` exactly as docs/protocol.md §6 (the
/// proposed EPNS mobile schema plus `wallet`). Type-2 rows are stored as received; their plaintext
/// never reaches the disk.
public final class InboxStore: Sendable {
    let queue: DatabaseQueue

    public static let feedSQL = """
        CREATE TABLE feed (
          nid    INTEGER PRIMARY KEY NOT NULL,
          sid    INTEGER,
          type   INTEGER NOT NULL,
          app    TEXT    NOT NULL,
          icon   TEXT    NOT NULL,
          url    TEXT    NOT NULL,
          appbot INTEGER NOT NULL DEFAULT 0,
          secret TEXT,
          asub   TEXT,
          amsg   TEXT    NOT NULL,
          acta   TEXT,
          aimg   TEXT,
          hidden INTEGER NOT NULL DEFAULT 0,
          epoch  INTEGER NOT NULL,
          wallet TEXT    NOT NULL,
          UNIQUE (wallet, sid)
        );
        CREATE INDEX feed_by_wallet_epoch ON feed (wallet, epoch DESC, nid DESC);
        """

    /// An extra column after the §6 ones (which §6 allows): the sending channel's EIP-55 address,
    /// known for items pulled from the feed, NULL for items that arrived as pushes.
    public static let channelSQL = """
        ALTER TABLE feed ADD COLUMN channel TEXT;
        CREATE INDEX feed_by_wallet_channel ON feed (wallet, channel, epoch DESC, nid DESC);
        """

    /// Another extra column: for Bisq rows (docs/protocol.md §8), the SHA-256 of the message's JSON, so that a
    /// message ingested twice is cached once although it has no `sid`.
    public static let bisqSQL = """
        ALTER TABLE feed ADD COLUMN bisq_digest TEXT;
        CREATE UNIQUE INDEX feed_bisq_digest ON feed (wallet, bisq_digest) WHERE bisq_digest IS NOT NULL;
        """

    /// docs/protocol.md §6: the first extra column is `read` (1 once the row was read here or the server says
    /// so). SQLite adds columns only at the end, so the table is rebuilt with `read` right after `wallet`,
    /// every row and index kept.
    public static let readSQL = """
        CREATE TABLE feed_read (
          nid    INTEGER PRIMARY KEY NOT NULL,
          sid    INTEGER,
          type   INTEGER NOT NULL,
          app    TEXT    NOT NULL,
          icon   TEXT    NOT NULL,
          url    TEXT    NOT NULL,
          appbot INTEGER NOT NULL DEFAULT 0,
          secret TEXT,
          asub   TEXT,
          amsg   TEXT    NOT NULL,
          acta   TEXT,
          aimg   TEXT,
          hidden INTEGER NOT NULL DEFAULT 0,
          epoch  INTEGER NOT NULL,
          wallet TEXT    NOT NULL,
          read   INTEGER NOT NULL DEFAULT 0,
          channel TEXT,
          bisq_digest TEXT,
          UNIQUE (wallet, sid)
        );
        INSERT INTO feed_read (nid, sid, type, app, icon, url, appbot, secret, asub, amsg, acta, aimg, hidden, epoch,
                               wallet, read, channel, bisq_digest)
          SELECT nid, sid, type, app, icon, url, appbot, secret, asub, amsg, acta, aimg, hidden, epoch, wallet, 0,
                 channel, bisq_digest
          FROM feed;
        DROP TABLE feed;
        ALTER TABLE feed_read RENAME TO feed;
        CREATE INDEX feed_by_wallet_epoch ON feed (wallet, epoch DESC, nid DESC);
        CREATE INDEX feed_by_wallet_channel ON feed (wallet, channel, epoch DESC, nid DESC);
        CREATE UNIQUE INDEX feed_bisq_digest ON feed (wallet, bisq_digest) WHERE bisq_digest IS NOT NULL;
        """

    public init(path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        queue = try DatabaseQueue(path: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("0001_feed") { db in try db.execute(sql: Self.feedSQL) }
        migrator.registerMigration("0002_channel") { db in try db.execute(sql: Self.channelSQL) }
        migrator.registerMigration("0003_bisq") { db in try db.execute(sql: Self.bisqSQL) }
        migrator.registerMigration("0004_read") { db in try db.execute(sql: Self.readSQL) }
        try migrator.migrate(queue)
    }

    /// A stored row.
    public struct Row: Sendable, Hashable {
        public let nid: Int64
        public let item: FeedItem
        public let hidden: Bool
        public let wallet: String
        /// Read here, or on the server (docs/protocol.md §10).
        public let read: Bool

        public init(nid: Int64, item: FeedItem, hidden: Bool, wallet: String, read: Bool = false) {
            self.nid = nid
            self.item = item
            self.hidden = hidden
            self.wallet = wallet
            self.read = read
        }

        /// The same row with the item replaced (a type-2 item decrypted in memory for display).
        public func with(_ item: FeedItem) -> Row {
            Row(nid: nid, item: item, hidden: hidden, wallet: wallet, read: read)
        }
    }

    /// Inserts the items for `wallet` in one transaction; an item already cached (same sid) is kept
    /// as it is, except that a row from a push learns its channel from a synced copy. Returns how many
    /// were new.
    @discardableResult
    public func insert(_ items: [FeedItem], wallet: EthereumAddress) throws -> Int {
        try queue.write { db in
            var added = 0
            for item in items {
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO feed
                          (sid, type, app, icon, url, secret, asub, amsg, acta, aimg, epoch, wallet, channel)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        item.sid, item.type, item.app, item.icon, item.url, item.secret, item.subject, item.message,
                        item.callToAction, item.image, item.epoch, wallet.checksummed, item.sender?.checksummed,
                    ])
                if db.changesCount > 0 {
                    added += 1
                } else if let sender = item.sender {
                    try db.execute(
                        sql: "UPDATE feed SET channel = ? WHERE wallet = ? AND sid = ? AND channel IS NULL",
                        arguments: [sender.checksummed, wallet.checksummed, item.sid])
                }
            }
            return added
        }
    }

    public enum Visibility: Sendable {
        case visible, hidden, all
        /// Neither read nor hidden (`inbox count --unread`).
        case unread

        /// The `AND …` condition selecting these rows.
        var condition: String {
            switch self {
            case .visible: return " AND hidden = 0"
            case .hidden: return " AND hidden = 1"
            case .all: return ""
            case .unread: return " AND hidden = 0 AND read = 0"
            }
        }
    }

    /// Which channel's items: by address (items pulled from the feed) or by app name (any item).
    public enum ChannelFilter: Sendable, Hashable {
        case address(EthereumAddress)
        case app(String)
    }

    /// Newest first (`ORDER BY epoch DESC, nid DESC`).
    public func list(
        wallet: EthereumAddress, visibility: Visibility = .visible, channel: ChannelFilter? = nil, limit: Int?,
        offset: Int = 0
    )
        throws -> [Row]
    {
        try list(walletKey: wallet.checksummed, visibility: visibility, channel: channel, limit: limit, offset: offset)
    }

    /// Newest first, for a `wallet` column value: an EIP-55 address or a pseudo-wallet such as `bisq:…`.
    public func list(
        walletKey: String, visibility: Visibility = .visible, channel: ChannelFilter? = nil, limit: Int?,
        offset: Int = 0
    )
        throws -> [Row]
    {
        var arguments: StatementArguments = [walletKey]
        var condition = "wallet = ?" + visibility.condition
        switch channel {
        case .address(let address):
            condition += " AND channel = ?"
            arguments += [address.checksummed]
        case .app(let app):
            condition += " AND app = ?"
            arguments += [app]
        case nil:
            break
        }
        let sql = "SELECT * FROM feed WHERE \(condition) ORDER BY epoch DESC, nid DESC LIMIT ? OFFSET ?"
        arguments += [limit ?? -1, offset]
        return try queue.read { db in try GRDB.Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.row) }
    }

    /// How a cached item got here.
    public enum Origin: Sendable, Hashable {
        /// From `inbox sync`: everything older was synced with it.
        case feed
        /// From a push (`inbox ingest`): older items may still be missing.
        case push
    }

    /// Whether (and how) the wallet's cache holds the item with this sid, hidden or not. Synced rows
    /// know their channel; rows from pushes do not.
    public func origin(sid: Int64, wallet: EthereumAddress) throws -> Origin? {
        try queue.read { db in
            try GRDB.Row.fetchOne(
                db, sql: "SELECT channel FROM feed WHERE wallet = ? AND sid = ?", arguments: [wallet.checksummed, sid]
            ).map { row in (row["channel"] as String?) == nil ? .push : .feed }
        }
    }

    public func row(nid: Int64, wallet: EthereumAddress) throws -> Row? {
        try row(nid: nid, walletKey: wallet.checksummed)
    }

    public func row(nid: Int64, walletKey: String) throws -> Row? {
        try queue.read { db in
            try GRDB.Row.fetchOne(
                db, sql: "SELECT * FROM feed WHERE nid = ? AND wallet = ?", arguments: [nid, walletKey]
            )
            .map(Self.row)
        }
    }

    /// Hides or unhides rows (`nids` nil: all of the wallet's). Returns how many changed.
    @discardableResult
    public func setHidden(_ hidden: Bool, nids: [Int64]?, wallet: EthereumAddress) throws -> Int {
        try setHidden(hidden, nids: nids, walletKey: wallet.checksummed)
    }

    @discardableResult
    public func setHidden(_ hidden: Bool, nids: [Int64]?, walletKey: String) throws -> Int {
        try queue.write { db in
            if let nids {
                var changed = 0
                for nid in nids {
                    try db.execute(
                        sql: "UPDATE feed SET hidden = ? WHERE nid = ? AND wallet = ?",
                        arguments: [hidden, nid, walletKey])
                    changed += db.changesCount
                }
                return changed
            }
            try db.execute(sql: "UPDATE feed SET hidden = ? WHERE wallet = ?", arguments: [hidden, walletKey])
            return db.changesCount
        }
    }

    /// Marks rows read (`nids` nil: all of the wallet's); nothing marks a row unread. Returns the rows
    /// changed and the sids of the rows named (those a server knows: Bisq rows have none).
    public func markRead(nids: [Int64]?, walletKey: String) throws -> (changed: Int, sids: [Int64]) {
        try queue.write { db in
            guard let nids else {
                try db.execute(sql: "UPDATE feed SET read = 1 WHERE wallet = ? AND read = 0", arguments: [walletKey])
                return (db.changesCount, [])
            }
            var changed = 0
            var sids: [Int64] = []
            for nid in nids {
                try db.execute(
                    sql: "UPDATE feed SET read = 1 WHERE nid = ? AND wallet = ? AND read = 0",
                    arguments: [nid, walletKey])
                changed += db.changesCount
                if let sid = try Int64.fetchOne(
                    db, sql: "SELECT sid FROM feed WHERE nid = ? AND wallet = ?", arguments: [nid, walletKey])
                {
                    sids.append(sid)
                }
            }
            return (changed, sids)
        }
    }

    /// Marks the rows with these sids read, as the server says they are (`inbox sync`). Returns how many changed.
    @discardableResult
    public func markRead(sids: [Int64], wallet: EthereumAddress) throws -> Int {
        try queue.write { db in
            var changed = 0
            for sid in sids {
                try db.execute(
                    sql: "UPDATE feed SET read = 1 WHERE wallet = ? AND sid = ? AND read = 0",
                    arguments: [wallet.checksummed, sid])
                changed += db.changesCount
            }
            return changed
        }
    }

    /// The largest sid cached for the wallet (sids are issued in order: a ReadMark's `upTo` for "all").
    public func largestSid(wallet: EthereumAddress) throws -> Int64? {
        try queue.read { db in
            try Int64.fetchOne(db, sql: "SELECT MAX(sid) FROM feed WHERE wallet = ?", arguments: [wallet.checksummed])
        }
    }

    /// Rows of the wallet with a sid that are not read here: what a sync compares with the server's count.
    public func unreadSynced(wallet: EthereumAddress) throws -> Int {
        try queue.read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM feed WHERE wallet = ? AND sid IS NOT NULL AND read = 0",
                arguments: [wallet.checksummed]) ?? 0
        }
    }

    public func count(wallet: EthereumAddress, visibility: Visibility = .visible) throws -> Int {
        try count(walletKey: wallet.checksummed, visibility: visibility)
    }

    public func count(walletKey: String, visibility: Visibility = .visible) throws -> Int {
        try queue.read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM feed WHERE wallet = ?" + visibility.condition, arguments: [walletKey])
                ?? 0
        }
    }

    /// `PRAGMA table_info(feed)`: (name, declared type, not null) per column, for schema checks.
    public func feedColumns() throws -> [(name: String, type: String, notNull: Bool)] {
        try queue.read { db in
            try GRDB.Row.fetchAll(db, sql: "PRAGMA table_info(feed)").map { row in
                (name: row["name"], type: row["type"], notNull: (row["notnull"] as Int) == 1)
            }
        }
    }

    private static func row(_ row: GRDB.Row) -> Row {
        Row(
            nid: row["nid"],
            item: FeedItem(
                sid: row["sid"] ?? 0, type: row["type"], app: row["app"], icon: row["icon"], url: row["url"],
                secret: row["secret"] ?? "", subject: row["asub"] ?? "", message: row["amsg"],
                callToAction: row["acta"] ?? "",
                image: row["aimg"] ?? "", epoch: row["epoch"],
                sender: (row["channel"] as String?).flatMap { try? EthereumAddress(parsing: $0) }),
            hidden: (row["hidden"] as Int) == 1, wallet: row["wallet"], read: (row["read"] as Int) == 1)
    }
}
