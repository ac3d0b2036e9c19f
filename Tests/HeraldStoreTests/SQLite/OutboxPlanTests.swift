import GRDB
import Testing

@testable import HeraldStoreSQLite

/// Migration 0017: a claim reads the due index from its own platforms' ends, and a read mark finds the
/// read-sync push it replaces by its binding. Before it, both walked every queued push (a lane with nothing
/// of its own to send took 10 ms of the writer a poll with 100,000 queued for APNs), which the plans show.
@Suite struct OutboxPlanTests {
    /// `EXPLAIN QUERY PLAN`'s details for `sql`, its parameters left NULL.
    static func plan(of sql: String, in queue: DatabaseQueue) throws -> [String] {
        try queue.read { db in
            let statement = try db.makeStatement(sql: "EXPLAIN QUERY PLAN " + sql)
            // Nothing bound: SQLite plans with NULLs.
            statement.setUncheckedArguments([])
            return try Row.fetchAll(statement).map { $0["detail"] as String }
        }
    }

    @Test(arguments: 1...4)
    func aClaimReadsOnlyItsPlatformsDuePushes(platforms: Int) async throws {
        try await SQLiteTestDatabase.with { database in
            let queue = try database.queue()
            try Migrations.migrator.migrate(queue)
            let plan = try Self.plan(of: SQLiteHeraldStore.claimSQL(platforms: platforms), in: queue)
            let reads = plan.filter { $0.contains("push_outbox") }
            #expect(
                reads.filter {
                    // The platform's end of the index, from the claim's position up to now.
                    $0.contains("USING INDEX push_outbox_due (platform=? AND next_attempt_at>? AND next_attempt_at<?)")
                }.count == platforms, "\(plan)")
            #expect(reads.filter { $0.contains("USING INTEGER PRIMARY KEY") }.count == 1, "\(plan)")
            #expect(reads.count == platforms + 1, "nothing else reads the outbox: \(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "merged in order, not sorted: \(plan)")
        }
    }

    @Test func aReadMarkFindsTheReadSyncPushItReplacesByItsBinding() async throws {
        try await SQLiteTestDatabase.with { database in
            let queue = try database.queue()
            try Migrations.migrator.migrate(queue)
            let plan = try Self.plan(of: SubscriberControlSQL.dropQueuedReadSync, in: queue)
            #expect(
                plan == [
                    "SEARCH push_outbox USING INDEX push_outbox_read_sync (wallet=? AND platform=? AND device_token=?)"
                ])
        }
    }

    /// The same checks fail on the schema before 0017: the claim searched the due index by time alone, the
    /// read mark scanned it whole.
    @Test func beforeMigration0017BothReadTheWholeQueue() async throws {
        try await SQLiteTestDatabase.with { database in
            let queue = try database.queue()
            try Migrations.migrator.migrate(queue, upTo: "0016_webhooks")
            let claim = try Self.plan(of: SQLiteHeraldStore.claimSQL(platforms: 1), in: queue)
            #expect(
                claim.contains { $0.contains("USING INDEX push_outbox_due (next_attempt_at>? AND next_attempt_at<?)") },
                "\(claim)")
            let readMark = try Self.plan(of: SubscriberControlSQL.dropQueuedReadSync, in: queue)
            #expect(readMark == ["SCAN push_outbox USING INDEX push_outbox_due"])
        }
    }
}
