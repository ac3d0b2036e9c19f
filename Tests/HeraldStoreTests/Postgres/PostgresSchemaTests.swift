import Foundation
import HeraldStore
import HeraldStoreSQLite
import Testing

@testable import HeraldStorePostgres

/// Migrations: once however many nodes start together, refused when the database is newer.
@Suite struct PostgresSchemaTests {
    @Test(.enabled(if: PostgresTestServer.isConfigured, "set \(PostgresTestServer.variable) to test PostgreSQL"))
    func migrationsRunOnceWhenNodesOpenAtOnce() async throws {
        try await TestDatabase.with { database in
            // Each open takes the advisory lock before looking at the version: the later ones find the
            // work done. Without the lock, a second CREATE TABLE would fail one of them.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { _ = try await database.open(poolSize: 2) } }
                try await group.waitForAll()
            }
            let versions = try await database.integers("SELECT version FROM schema_migrations ORDER BY version")
            #expect(versions == PostgresMigrations.all.map { Int64($0.version) })
        }
    }

    @Test(.enabled(if: PostgresTestServer.isConfigured, "set \(PostgresTestServer.variable) to test PostgreSQL"))
    func aDatabaseNewerThanThisHeraldIsRefused() async throws {
        try await TestDatabase.with { database in
            try await database.open().close()
            let newer = PostgresMigrations.latest + 1
            try await database.execute("INSERT INTO schema_migrations (version, name) VALUES (\(newer), 'future')")
            let error = await #expect(throws: StoreError.self) { try await database.open() }
            let latest = PostgresMigrations.latest
            #expect(
                error?.description
                    == "the database schema is version \(newer), newer than this herald (\(latest)): upgrade herald")
        }
    }

    /// Migration 0015 starts each wallet's items added at the number of its unread items that are not spam
    /// (none taken yet), as SQLite's 0012 does: its last statement, run again on items of every kind,
    /// counts only those.
    @Test(.enabled(if: PostgresTestServer.isConfigured, "set \(PostgresTestServer.variable) to test PostgreSQL"))
    func theUnreadNumbersMigrationCountsUnreadItemsThatAreNotSpam() async throws {
        try await TestDatabase.with { database in
            try await database.open().close()
            try await database.execute(
                """
                INSERT INTO notifications (channel, type, title, body, app, icon, url, asub, amsg, acta, aimg, epoch)
                VALUES ('\\x\(String(repeating: "cd", count: 20))', 3, 't', 'b', 'a', 'i', 'u', '', '', '', '', 5)
                """)
            // ab…: two unread, one read, one unread spam; cd…: one unread; ef…: one read.
            for (wallet, read, spam) in [
                ("ab", false, false), ("ab", false, false), ("ab", true, false), ("ab", false, true),
                ("cd", false, false),
                ("ef", true, false),
            ] {
                try await database.execute(
                    """
                    INSERT INTO feed_items (recipient, notification, read, spam)
                    SELECT '\\x\(String(repeating: wallet, count: 20))', max(id), \(read), \(spam) FROM notifications
                    """)
            }
            try await database.execute("DELETE FROM wallet_unread_added")
            let backfill = try #require(PostgresMigrator.statements(of: PostgresMigrations.walletUnreadSQL).last)
            #expect(backfill.contains("INSERT INTO wallet_unread_added"))
            try await database.execute(backfill)
            #expect(
                try await database.integers("SELECT added FROM wallet_unread_added ORDER BY wallet") == [2, 1],
                "ab… 2, cd… 1, ef… none")
        }
    }

    /// The operators' copy in `Schemas/sql/postgres/` is the migration, line for line (after its header).
    @Test func theSchemaFilesMatchTheMigrations() throws {
        // Tests/HeraldStoreTests/Postgres/this file: four levels below the package.
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Schemas/sql/postgres")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }
        #expect(files.sorted() == PostgresMigrations.all.map { $0.name + ".sql" })
        for migration in PostgresMigrations.all {
            let file = migration.name + ".sql"
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let body = text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")
            #expect(
                body.trimmingCharacters(in: .whitespacesAndNewlines)
                    == migration.sql.trimmingCharacters(in: .whitespacesAndNewlines), "\(file)")
        }
    }

    @Test func migrationsSplitIntoWholeStatements() {
        for migration in PostgresMigrations.all {
            let statements = PostgresMigrator.statements(of: migration.sql)
            // Each statement of these migrations starts a line with its verb.
            let verbs = ["CREATE ", "ALTER ", "DROP ", "INSERT ", "UPDATE ", "DELETE "]
            let starts = migration.sql.split(separator: "\n").filter { line in verbs.contains { line.hasPrefix($0) } }
            #expect(statements.count == starts.count, "\(migration.name)")
            #expect(statements.allSatisfy { $0.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix(";") })
        }
        #expect(PostgresMigrator.statements(of: "-- a\nCREATE TABLE t (\n  a int -- x\n);\n\nSELECT 1;").count == 2)
        // A function's body ends no statement.
        let function =
            "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$\nBEGIN\n  PERFORM 1;\n  RETURN 2;\nEND\n$$;"
        let split = PostgresMigrator.statements(of: function + "\nSELECT 1;")
        #expect(split == [function, "SELECT 1;"])
    }
}
