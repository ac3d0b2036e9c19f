import Foundation
import GRDB
import Testing

@testable import HeraldStoreSQLite

/// Migration 0012 replaces the partial index `feed_items_unread` with a number per wallet: a database
/// from before it gets each wallet's unread items that are not spam as that number, and the index goes.
@Suite struct UnreadCountersMigrationTests {
    @Test func eachWalletGetsTheNumberOfItsUnreadItemsThatAreNotSpam() async throws {
        try await SQLiteTestDatabase.with { database in
            let queue = try database.queue()
            try Migrations.migrator.migrate(queue, upTo: "0011_subscriber_control")
            let reader = Data(repeating: 0xAB, count: 20)
            let other = Data(repeating: 0xCD, count: 20)
            let allRead = Data(repeating: 0xEF, count: 20)
            try queue.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO notifications (id, channel, type, title, body, app, icon, url, asub, amsg, acta, aimg, epoch)
                        VALUES (1, ?, 3, 't', 'b', 'a', 'i', 'u', '', '', '', '', 5)
                        """, arguments: [other])
                // reader: two unread, one read, one unread spam; other: one unread; allRead: one read.
                for (recipient, read, spam) in [
                    (reader, 0, 0), (reader, 0, 0), (reader, 1, 0), (reader, 0, 1), (other, 0, 0), (allRead, 1, 0),
                ] {
                    try db.execute(
                        sql: "INSERT INTO feed_items (recipient, notification, read, spam) VALUES (?, 1, ?, ?)",
                        arguments: [recipient, read, spam])
                }
            }
            try Migrations.migrator.migrate(queue)
            try queue.read { db in
                let numbers = try Row.fetchAll(db, sql: "SELECT wallet, unread FROM wallet_unread ORDER BY wallet")
                    .map { ($0[0] as Data, $0[1] as Int) }
                #expect(numbers.map(\.0) == [reader, other] && numbers.map(\.1) == [2, 1])
                let indexes = try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'index'")
                #expect(!indexes.contains("feed_items_unread"))
            }
        }
    }
}
