import HeraldCore
import HeraldStore
import PostgresNIO

// The reads a request makes, as named prepared statements (planned once per pooled connection).

/// A page of a wallet's feed with its counts, one round trip on one snapshot (it had been three: the
/// total, the unread count and the page).
struct FeedPageStatement: PostgresPreparedStatement {
    static let name = "herald_feed_page"
    static let sql = """
        SELECT (SELECT count(*) FROM feed_items WHERE recipient = $1 AND spam = $2),
               \(PostgresControlReads.unread(parameter: "$1")),
               p.*
        FROM (SELECT 1) AS one LEFT JOIN LATERAL (
          SELECT f.sid, f.secret, \(DeliveredColumns.list), n.channel, f.read
          FROM feed_items f JOIN notifications n ON n.id = f.notification
          WHERE f.recipient = $1 AND f.spam = $2
          ORDER BY f.sid DESC LIMIT $3 OFFSET $4) AS p ON true
        """

    struct Row {
        let total: Int
        let unread: Int
        /// Nil on the one row of an empty page.
        let entry: FeedEntry?
    }

    let wallet: EthereumAddress
    let spam: Bool
    let limit: Int64
    let offset: Int64

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(bytea(wallet))
        bindings.append(spam)
        bindings.append(limit)
        bindings.append(offset)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let columns = Columns(row)
        let total = Int(try columns.int(0))
        let unread = Int(try columns.int(1))
        guard let sid = try columns.optionalInt(2) else { return Row(total: total, unread: unread, entry: nil) }
        let entry = FeedEntry(
            sender: try columns.address(4 + DeliveredColumns.count),
            notification: try DeliveredColumns.read(columns, sid: sid, secret: try columns.text(3), from: 4),
            read: try columns.bool(5 + DeliveredColumns.count))
        return Row(total: total, unread: unread, entry: entry)
    }
}

/// A wallet's public key, as recorded.
struct PublicKeyStatement: PostgresPreparedStatement {
    static let name = "herald_public_key"
    static let sql = "SELECT public_key FROM wallet_keys WHERE wallet = $1"

    let wallet: EthereumAddress

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(bytea(wallet))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> [UInt8] { try Columns(row).bytes(0) }
}
