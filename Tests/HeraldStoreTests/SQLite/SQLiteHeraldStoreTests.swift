import Foundation
import GRDB
import HeraldCore
import Testing

@testable import HeraldStore
@testable import HeraldStoreSQLite

/// What only the embedded SQLite store has: its file's journal and sync settings, the schema files
/// operators read, and voiding an earlier run's claims at start. Its `HeraldStore` behaviours are the
/// conformance suite's, run on every backend.
@Suite struct SQLiteHeraldStoreTests {
    @Test func theDatabaseRunsInWALWithFullSync() async throws {
        try await SQLiteTestDatabase.with { database in
            let store = try database.open()
            // The writer's connection is the one whose commits must be durable.
            let (mode, sync) = try await store.pool.writeWithoutTransaction { db in
                (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
            }
            #expect(mode == "wal")
            #expect(sync == 2, "synchronous = FULL")
        }
    }

    /// The operators' copy in `Schemas/sql/` is the migration, line for line (after its header).
    @Test func theSchemaFilesMatchTheMigrations() throws {
        // Tests/HeraldStoreTests/SQLite/this file: four levels below the package.
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Schemas/sql")
        for (identifier, sql) in Migrations.all {
            let file = identifier + ".sql"
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let body = text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")
            #expect(
                body.trimmingCharacters(in: .whitespacesAndNewlines)
                    == sql.trimmingCharacters(in: .whitespacesAndNewlines),
                "\(file)")
        }
    }

    /// One server holds the file, so at start every claim is its own earlier run's: `herald serve` voids
    /// them rather than wait for their leases.
    @Test func releasingClaimsFreesEveryClaimOfAnEarlierRun() async throws {
        try await SQLiteTestDatabase.with { database in
            let store = try database.open()
            try await Fixtures.seed(store, subscribers: 3)
            _ = try await store.apply(WebhookConformanceTests.change("https://h.example.org/", nonce: 9))
            _ = try await store.apply(Fixtures.subscription(key: Fixtures.subscriber(7), nonce: 1))
            #expect(try await WebhookConformanceTests.claim(store, now: 1_000) != nil)
            _ = try await store.submit(
                Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 5))
            let claimed = try await store.claimDuePushes(
                now: 1_000, limit: 5, platforms: nil, owner: "a", leaseUntil: 1_060)
            #expect(claimed.count == 3)
            #expect(
                try await store.claimDuePushes(now: 1_001, limit: 5, platforms: nil, owner: "c", leaseUntil: 1_200)
                    .isEmpty)
            #expect(try await store.prepareToServe() == 3)
            let again = try await store.claimDuePushes(
                now: 1_001, limit: 5, platforms: nil, owner: "c", leaseUntil: 1_200)
            #expect(Set(again.map(\.id)) == Set(claimed.map(\.id)))
            #expect(try await WebhookConformanceTests.claim(store, now: 1_001, owner: "c") != nil, "the webhook's too")
        }
    }

    /// The log is copied back into the file by the checkpoint thread, not by the writer's commits: after
    /// writes, a later round leaves no frame to copy, and the writer's own threshold is only a backstop.
    @Test func theLogIsCheckpointedInTheBackground() async throws {
        try await SQLiteTestDatabase.with { database in
            let store = try database.open()
            try await Fixtures.seed(store, subscribers: 20)
            let threshold = try await store.pool.writeWithoutTransaction { db in
                try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint")
            }
            #expect(threshold == WALCheckpointer.writerBackstopPages)
            // Two whole rounds after the last write: the second started after it committed.
            let first = store.checkpointer.completedRounds
            var waited = 0
            while store.checkpointer.completedRounds < first + 2 && waited < 400 {
                try await Task.sleep(for: .milliseconds(50))
                waited += 1
            }
            #expect(store.checkpointer.completedRounds >= first + 2, "the checkpoint thread stopped working")
            // The database file alone, without its log, already holds every write: copied aside and
            // opened there (with no log beside it), it has all twenty bindings.
            let copy = database.folder + "/copy.sqlite"
            try FileManager.default.copyItem(atPath: database.path, toPath: copy)
            let bindings = try await DatabaseQueue(path: copy).read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM bindings")
            }
            #expect(bindings == 20)
            try await store.close()
        }
    }

    /// Under steady writes the log starts over instead of growing by every page written: the writer
    /// restarts it between two transactions once the checkpoint thread finds it past its threshold. Before, passive rounds alone never found it
    /// fully copied while commits kept coming, and ten seconds of registrations left a 1 GiB file.
    @Test func theLogStartsOverUnderSteadyWrites() async throws {
        try await SQLiteTestDatabase.with { database in
            let store = try database.open(walRestartPages: 64)
            let log = database.path + "-wal"
            // One commit after another, each a refresh with a spent nonce (two pages a commit at least:
            // the binding's and the nonce's), for at least twenty checkpoint rounds.
            let firstRound = store.checkpointer.completedRounds
            var written = 0
            while store.checkpointer.completedRounds < firstRound + 20 || written < 4_000 {
                _ = try await store.apply(Fixtures.change(token: Fixtures.token(written % 10), nonce: UInt64(written)))
                written += 1
            }
            let size = try #require(try FileManager.default.attributesOfItem(atPath: log)[.size] as? Int)
            #expect(store.writer.logRestarts > 0)
            #expect(store.writerStatistics.transactions >= written)
            // Grown by every page written, the file would hold two per commit at least; restarted, it
            // holds what one round's interval wrote, past the threshold.
            #expect(size < written * 4096 / 4, "\(size) bytes of log after \(written) commits")
            try await store.close()
        }
    }
}
