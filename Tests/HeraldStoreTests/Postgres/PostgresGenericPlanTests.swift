import Foundation
import Testing

@testable import HeraldStorePostgres

/// A named prepared statement is planned for its parameters five times, then, when that is no dearer,
/// once for any parameters, and that generic plan is kept until the tables' statistics change. On a
/// new database it is made while the tables are nearly empty, where a sequential scan is the cheapest
/// plan, and it was kept while they grew until autovacuum's next ANALYZE: a registration batch's
/// facts scanned the whole nonces table (8.8 ms a batch at 17,000 rows, ten seconds after the start).
/// A node analyzes its young tables as they grow (`PostgresPlanFreshness`); each statement's generic plan
/// on an analyzed database must reach its rows through indexes.
@Suite(.enabled(if: PostgresTestServer.isConfigured, "set \(PostgresTestServer.variable) to test PostgreSQL"))
struct PostgresGenericPlanTests {
    struct Statement: Sendable, CustomTestStringConvertible {
        let name: String
        let sql: String
        var testDescription: String { name }
    }

    static let statements = [
        Statement(name: "registration facts (migration 0014's query)", sql: registrationFactsQuery),
        Statement(name: RegistrationWriteStatement.name, sql: RegistrationWriteStatement.sql),
        Statement(name: UnregisterStatement.name, sql: UnregisterStatement.sql),
        Statement(name: ClaimDuePushesStatement.name, sql: ClaimDuePushesStatement.sql),
        Statement(name: RecordOutcomesStatement.name, sql: RecordOutcomesStatement.sql),
        Statement(name: FeedPageStatement.name, sql: FeedPageStatement.sql),
        Statement(name: PublicKeyStatement.name, sql: PublicKeyStatement.sql),
        Statement(name: "drop queued read-sync pushes", sql: PostgresWriteSQL.dropQueuedReadSync),
    ]

    /// The query of migration 0014's function, which a registration batch calls after its locks, as a
    /// statement of its own (the function's arguments as parameters): PL/pgSQL keeps a plan for it by the
    /// same rules as a prepared statement's.
    static let registrationFactsQuery: String = {
        let function = PostgresMigrations.registrationFactsSQL
        let query = function.components(separatedBy: "RETURN QUERY").last?.prefix { $0 != ";" } ?? ""
        return query.replacingOccurrences(
            of: "unnest(wallets, platforms, tokens, digests)",
            with: "unnest($1::bytea[], $2::text[], $3::text[], $4::bytea[])")
    }()

    @Test func theRegistrationFactsQueryIsTheFunctions() {
        #expect(Self.registrationFactsQuery.contains("unnest($1::bytea[], $2::text[], $3::text[], $4::bytea[])"))
        #expect(Self.registrationFactsQuery.contains("LEFT JOIN nonces"))
    }

    /// A young table is analyzed once it holds twice the rows its statistics say (1,000 at least), and the
    /// statements reading it are planned again with indexes; a table that has not grown is left alone.
    @Test func grownTablesAreAnalyzedSoThatPlansUseTheirIndexes() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            let freshness = PostgresPlanFreshness(client: store.client, logger: PostgresTestServer.logger)
            // Autovacuum would analyze the tables too, once a minute: under the whole suite's load this test
            // once ran long enough for it to analyze nonces first, leaving the node nothing to do there.
            for table in ["nonces", "bindings"] {
                try await database.execute("ALTER TABLE \(table) SET (autovacuum_enabled = false)")
            }
            try await Self.populate(database, statements: 2)
            // The inserting backend reports its rows to the statistics as it exits, a moment later.
            var analyzed: [String] = []
            for _ in 0..<50 where analyzed.count < 2 {
                analyzed += try await freshness.analyzeGrownTables()
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(analyzed.sorted() == ["bindings", "nonces"])
            #expect(
                try await database.integers("SELECT reltuples::bigint FROM pg_class WHERE relname = 'nonces'") == [
                    5_000
                ])
            let plan = try await database.genericPlan(of: Self.registrationFactsQuery)
            #expect(Self.wholeTableScans(in: plan).isEmpty, "\(plan.joined(separator: "\n"))")
            let again = try await freshness.analyzeGrownTables()
            #expect(again == [])
        }
    }

    /// The same once the tables hold some thousands of rows and have been analyzed, as autovacuum does.
    @Test(arguments: statements)
    func genericPlanOnAnAnalyzedDatabaseScansNoTable(_ statement: Statement) async throws {
        try await TestDatabase.with { database in
            _ = try await database.open()
            try await Self.populate(database)
            let plan = try await database.genericPlan(of: statement.sql)
            let unbounded = Self.wholeTableScans(in: plan)
            #expect(unbounded.isEmpty, "\(statement.name):\n\(plan.joined(separator: "\n"))")
        }
    }

    /// Migration 0012: a claim reads the due index from each of its platforms' ends (on time alone, a lane
    /// with nothing of its own read every other queued push and its row at each poll), from the lane's
    /// position on, and a read mark finds the read-sync push it replaces by its binding.
    @Test func theOutboxIsReadByPlatformAndByBinding() async throws {
        try await TestDatabase.with { database in
            _ = try await database.open()
            try await Self.populate(database)
            let claim = try await database.genericPlan(of: ClaimDuePushesStatement.sql)
            let due = try #require(
                claim.firstIndex { $0.contains("Index Scan using push_outbox_due") }, "\(claim.joined(separator: "\n"))"
            )
            #expect(claim[due + 1].contains("Index Cond: ((platform = p.platform)"), "\(claim.joined(separator: "\n"))")
            // The lane's position bounds the scan itself (`ClaimCursor`), not a filter of what it walked.
            #expect(
                claim[due + 1].contains("(ROW(next_attempt_at, id) > ROW($6, $7))"), "\(claim.joined(separator: "\n"))")
            let readMark = try await database.genericPlan(of: PostgresWriteSQL.dropQueuedReadSync)
            #expect(
                readMark.contains { $0.contains("push_outbox_read_sync") }, "\(readMark.joined(separator: "\n"))")
        }
    }

    /// Runs the first `statements` of `population` (all of them by default), one at a time.
    static func populate(_ database: TestDatabase, statements: Int = .max) async throws {
        for statement in population.split(separator: ";\n").prefix(statements) {
            try await database.execute(String(statement))
        }
    }

    /// 5,000 nonces and bindings (the first two statements), keys; 5,000 notifications, each with an item
    /// and a queued push; each item's wallet's unread numbers (added, taken); then ANALYZE.
    static let population = """
        INSERT INTO nonces (digest, retained_until) SELECT substr(sha256(int8send(g)), 1, 16), 0 FROM generate_series(1, 5000) g;
        INSERT INTO bindings (wallet, platform, device_token, created_at, last_seen)
          SELECT substr(sha256(int8send(g)), 1, 20), 'ios', md5(g::text), 0, 0 FROM generate_series(1, 5000) g;
        INSERT INTO wallet_keys (wallet, public_key, updated_at)
          SELECT substr(sha256(int8send(g)), 1, 20), '\\x04'::bytea || sha512(int8send(g)), 0 FROM generate_series(1, 5000) g;
        INSERT INTO notifications (channel, type, title, body, app, icon, url, asub, amsg, acta, aimg, epoch)
          SELECT substr(sha256('c'), 1, 20), 1, 't', 'b', 'a', '', '', '', '', '', '', 0 FROM generate_series(1, 5000) g;
        INSERT INTO feed_items (recipient, notification) SELECT substr(sha256(int8send(g)), 1, 20), g FROM generate_series(1, 5000) g;
        INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
          SELECT g, substr(sha256(int8send(g)), 1, 20), 'ios', md5(g::text), 0, 0 FROM generate_series(1, 5000) g;
        INSERT INTO wallet_unread_added (wallet, added) SELECT substr(sha256(int8send(g)), 1, 20), 2 FROM generate_series(1, 5000) g;
        INSERT INTO wallet_unread_taken (wallet, taken) SELECT substr(sha256(int8send(g)), 1, 20), 1 FROM generate_series(1, 5000) g;
        ANALYZE;
        """

    /// The check itself: a sequential scan and an index scan without a condition are found; an index
    /// scan with one, or a bitmap heap scan under its index scan, is not.
    @Test func unboundedScansAreFound() {
        let plan = [
            "Nested Loop",
            "  ->  Seq Scan on nonces n  (cost=0.00..16.10 rows=610 width=96)",
            "  ->  Index Scan using push_outbox_due on push_outbox o  (cost=0.12..8.14 rows=1 width=50)",
            "        Filter: (status = 'queued'::text)",
            "  ->  Index Scan using nonces_pkey on nonces n  (cost=0.29..8.30 rows=1 width=96)",
            "        Index Cond: (digest = r.digest)",
            "  ->  Bitmap Heap Scan on bindings b_1  (cost=8.88..161.54 rows=61 width=0)",
            "        Recheck Cond: (wallet = r.wallet)",
            "        ->  Bitmap Index Scan on bindings_pkey  (cost=0.00..8.87 rows=61 width=0)",
            "              Index Cond: (wallet = r.wallet)",
        ]
        #expect(Self.wholeTableScans(in: plan) == [plan[1], plan[2]])
    }

    /// The plan's nodes that read a table, or all of an index, without a condition bounding what they read:
    /// a sequential scan, or an index scan with no `Index Cond` (a bitmap heap scan is bounded by its
    /// bitmap index scan, checked on its own).
    static func wholeTableScans(in plan: [String]) -> [String] {
        var unbounded: [String] = []
        for (index, line) in plan.enumerated() {
            if line.contains("Seq Scan on") {
                unbounded.append(line)
                continue
            }
            guard line.contains("Index Scan using") || line.contains("Index Only Scan using") else { continue }
            let details = plan[(index + 1)...].prefix {
                !$0.contains("->") && !$0.contains("SubPlan") && !$0.contains("InitPlan") && !$0.contains("CTE ")
            }
            if !details.contains(where: { $0.contains("Index Cond") }) { unbounded.append(line) }
        }
        return unbounded
    }
}
