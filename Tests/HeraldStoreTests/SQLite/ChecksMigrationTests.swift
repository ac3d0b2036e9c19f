import Foundation
import GRDB
import Testing

@testable import HeraldStore
@testable import HeraldStoreSQLite

/// Migration 0009 rebuilds `bindings` and `push_outbox` with CHECKs that SQLite evaluates without a
/// temporary B-tree: every row survives, the rules still hold, and the hot statements plan none.
@Suite struct ChecksMigrationTests {
    @Test func everyRowOfAnEarlierDatabaseSurvives() async throws {
        try await SQLiteTestDatabase.with { database in
            let queue = try database.queue()
            try Migrations.migrator.migrate(queue, upTo: "0008_webpush")
            let wallet = Data(repeating: 0xAB, count: 20)
            try queue.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO bindings (wallet, platform, device_token, created_at, last_seen, p256dh, auth)
                        VALUES (?, 'ios', 'aa11', 1, 2, NULL, NULL), (?, 'webpush', 'https://push.example/x', 3, 4, 'key', 'secret')
                        """, arguments: [wallet, wallet])
                try db.execute(
                    sql: """
                        INSERT INTO push_outbox (id, sid, wallet, platform, device_token, apns_id, queued_at, status,
                                                 attempts, next_attempt_at, last_error, claimed_until, claimed_by,
                                                 bisq_message, bisq_flags)
                        VALUES (7, NULL, ?, 'ios', 'aa11', X'00112233445566778899AABBCCDDEEFF', 10, 'queued', 0, 10,
                                NULL, 99, 'node-a', NULL, 0),
                               (8, 41, ?, 'android', 'bb22', X'FFEEDDCCBBAA99887766554433221100', 11, 'failed', 3, 50,
                                'FCM 500', NULL, NULL, 'BisqMessage', 3)
                        """, arguments: [wallet, wallet])
            }
            let bindingsBefore = try queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM bindings ORDER BY 2") }
            let outboxBefore = try queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM push_outbox ORDER BY id")
            }

            try Migrations.migrator.migrate(queue, upTo: "0010_retention")

            try queue.read { db in
                #expect(try Row.fetchAll(db, sql: "SELECT * FROM bindings ORDER BY 2") == bindingsBefore)
                #expect(try Row.fetchAll(db, sql: "SELECT * FROM push_outbox ORDER BY id") == outboxBefore)
                let indexes = try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
                #expect(indexes.contains("bindings_by_token"))
                #expect(indexes.contains("push_outbox_due"))
                #expect(indexes.contains("push_outbox_by_sid"))
            }
        }
    }

    @Test func theRulesStillHold() async throws {
        try await SQLiteTestDatabase.with { database in
            let queue = try database.queue()
            try Migrations.migrator.migrate(queue)
            let wallet = Data(repeating: 0x01, count: 20)
            try queue.write { db in
                #expect(throws: DatabaseError.self) {
                    try db.execute(
                        sql:
                            "INSERT INTO bindings (wallet, platform, device_token, created_at, last_seen) VALUES (?, 'web', 't', 1, 1)",
                        arguments: [wallet])
                }
                try db.execute(
                    sql: """
                        INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
                        VALUES (NULL, ?, 'webpush', 't', 1, 1)
                        """, arguments: [wallet])
                #expect(throws: DatabaseError.self) {
                    try db.execute(sql: "UPDATE push_outbox SET status = 'lost'")
                }
                #expect(throws: DatabaseError.self) {
                    try db.execute(sql: "UPDATE push_outbox SET platform = 'IOS'")
                }
            }
        }
    }

    /// What the change is for: no statement a registration or an outcome runs builds a temporary B-tree.
    @Test func theHotStatementsPlanNoTemporaryTable() async throws {
        try await SQLiteTestDatabase.with { database in
            let queue = try database.queue()
            try Migrations.migrator.migrate(queue)
            let statements = [
                "INSERT INTO bindings (wallet, platform, device_token, created_at, last_seen) VALUES (?, ?, ?, ?, ?)",
                "INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at) VALUES (NULL, ?, ?, ?, ?, ?)",
                "UPDATE push_outbox SET status = 'sent', claimed_until = NULL WHERE id = ?",
            ]
            try queue.read { db in
                for sql in statements {
                    // EXPLAIN only compiles the statement; its parameters may stay NULL.
                    let parameters = sql.filter { $0 == "?" }.count
                    let plan = try Row.fetchAll(
                        db, sql: "EXPLAIN " + sql,
                        arguments: StatementArguments(Array(repeating: DatabaseValue.null, count: parameters)))
                    let opcodes = plan.map { $0["opcode"] as String }
                    #expect(opcodes.contains("Halt"), "the plan was read")
                    #expect(!opcodes.contains("OpenEphemeral"), "\(sql)")
                }
            }
        }
    }
}
