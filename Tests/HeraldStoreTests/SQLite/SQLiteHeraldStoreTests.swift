import Foundation
import GRDB
import HeraldCore
import Testing

@testable import HeraldStore

/// A fresh database file per test, removed afterwards.
struct TemporaryStore {
    let folder: String
    let path: String
    let store: SQLiteHeraldStore

    init() throws {
        folder = NSTemporaryDirectory() + "herald-store-\(UUID().uuidString)"
        path = folder + "/db/herald.sqlite"
        store = try SQLiteHeraldStore(path: path)
    }

    func cleanUp() async {
        try? await store.close()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

@Suite struct SQLiteHeraldStoreTests {
    @Test func registerRefreshUnregisterAndAbsent() async throws {
        let temp = try TemporaryStore()
        defer { Task { await temp.cleanUp() } }
        let store = temp.store
        #expect(try await store.apply(Fixtures.change(nonce: 1, now: 1_000)) == .registered(created: true))
        #expect(try await store.apply(Fixtures.change(nonce: 2, now: 1_500)) == .registered(created: false))
        let bindings = try await store.bindings(of: Fixtures.key.address)
        #expect(bindings.count == 1)
        #expect(bindings.first?.createdAt == 1_000 && bindings.first?.lastSeen == 1_500)
        #expect(try await store.apply(Fixtures.change(.unregister, nonce: 3)) == .unregistered)
        #expect(try await store.apply(Fixtures.change(.unregister, nonce: 4)) == .absent)
        #expect(try await store.bindingCount() == 0)
        #expect(try await store.publicKey(of: Fixtures.key.address) == Fixtures.key.publicKey)
    }

    /// Two stores on one file stand for two nodes: B's memory never saw A's spend, so only the database's
    /// key on the digest can refuse the replay.
    @Test func theDatabaseNotMemoryJudgesAReplay() async throws {
        let temp = try TemporaryStore()
        defer { Task { await temp.cleanUp() } }
        let other = try SQLiteHeraldStore(path: temp.path)
        #expect(try await temp.store.apply(Fixtures.change(nonce: 41)) == .registered(created: true))
        #expect(try await other.apply(Fixtures.change(nonce: 41)) == .replayed)
        #expect(try await other.apply(Fixtures.change(.unregister, nonce: 41)) == .replayed)
        #expect(try await other.bindingCount() == 1, "the replay changed nothing")
        try await other.close()
    }

    @Test func aChangeRefusedOverTheLimitLeavesItsNonceUnspent() async throws {
        let temp = try TemporaryStore()
        defer { Task { await temp.cleanUp() } }
        let store = temp.store
        #expect(
            try await store.apply(Fixtures.change(token: Fixtures.token(1), nonce: 1, max: 1))
                == .registered(created: true))
        #expect(try await store.apply(Fixtures.change(token: Fixtures.token(2), nonce: 2, max: 1)) == .overLimit)
        #expect(
            try await store.apply(Fixtures.change(token: Fixtures.token(2), nonce: 2, max: 2))
                == .registered(created: true))
    }

    @Test func aNonceIsSpentOnceAcrossActions() async throws {
        let temp = try TemporaryStore()
        defer { Task { await temp.cleanUp() } }
        #expect(try await temp.store.apply(Fixtures.change(nonce: 7)) == .registered(created: true))
        #expect(try await temp.store.apply(Fixtures.change(nonce: 7)) == .replayed)
        #expect(try await temp.store.apply(Fixtures.change(.unregister, nonce: 7)) == .replayed)
        // The replay changed nothing: the binding is still there.
        #expect(try await temp.store.bindingCount() == 1)
        // Another wallet may use the same number.
        let other = try PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
        #expect(try await temp.store.apply(Fixtures.change(key: other, nonce: 7)) == .registered(created: true))
    }

    @Test func theBindingLimitRefusesNewTokensButNotRefreshes() async throws {
        let temp = try TemporaryStore()
        defer { Task { await temp.cleanUp() } }
        #expect(
            try await temp.store.apply(Fixtures.change(token: Fixtures.token(1), nonce: 1, max: 2))
                == .registered(created: true))
        #expect(
            try await temp.store.apply(Fixtures.change(token: Fixtures.token(2), nonce: 2, max: 2))
                == .registered(created: true))
        #expect(try await temp.store.apply(Fixtures.change(token: Fixtures.token(3), nonce: 3, max: 2)) == .overLimit)
        #expect(
            try await temp.store.apply(Fixtures.change(token: Fixtures.token(1), nonce: 4, max: 2))
                == .registered(created: false))
        // A refused change spends no nonce: the same operation succeeds once a slot is free.
        #expect(
            try await temp.store.apply(Fixtures.change(.unregister, token: Fixtures.token(2), nonce: 5, max: 2))
                == .unregistered)
        #expect(
            try await temp.store.apply(Fixtures.change(token: Fixtures.token(3), nonce: 3, max: 2))
                == .registered(created: true))
    }

    @Test func concurrentChangesAreGroupCommittedAndEachReplayWinsOnce() async throws {
        let temp = try TemporaryStore()
        defer { Task { await temp.cleanUp() } }
        let store = temp.store
        let outcomes = try await withThrowingTaskGroup(of: DeviceChangeOutcome.self) { group in
            for index in 0..<400 {
                // Every nonce is submitted twice at once: exactly one of each pair may win.
                for _ in 0..<2 {
                    group.addTask {
                        try await store.apply(
                            Fixtures.change(token: Fixtures.token(index), nonce: UInt64(index), max: 1000))
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .registered(created: true) }.count == 400)
        #expect(outcomes.filter { $0 == .replayed }.count == 400)
        #expect(try await store.bindingCount() == 400)
    }

    @Test func pruningForgetsExpiredNoncesAndStaleBindings() async throws {
        let temp = try TemporaryStore()
        defer { Task { await temp.cleanUp() } }
        _ = try await temp.store.apply(
            Fixtures.change(token: Fixtures.token(1), nonce: 1, now: 100, retainedUntil: 500))
        _ = try await temp.store.apply(
            Fixtures.change(token: Fixtures.token(2), nonce: 2, now: 900, retainedUntil: 1_500))
        #expect(try await temp.store.pruneNonces(expiredBefore: 1_000) == 1)
        // Nonce 1 is forgotten (its operation expired long ago); nonce 2 is still spent.
        #expect(
            try await temp.store.apply(Fixtures.change(token: Fixtures.token(1), nonce: 2, now: 1_000)) == .replayed)
        #expect(try await temp.store.pruneBindings(lastSeenBefore: 500) == 1)
        #expect(try await temp.store.bindings(of: Fixtures.key.address).map(\.deviceToken) == [Fixtures.token(2)])
    }

    @Test func dataSurvivesReopeningAndTheSchemaFileMatchesTheMigration() async throws {
        let temp = try TemporaryStore()
        defer { Task { await temp.cleanUp() } }
        // Nonces still within their retention are reloaded for the replay check; expired ones are not.
        let future = Int64(Date().timeIntervalSince1970) + 3_600
        _ = try await temp.store.apply(Fixtures.change(nonce: 1, retainedUntil: future))
        _ = try await temp.store.apply(Fixtures.change(token: Fixtures.token(9), nonce: 2, retainedUntil: 10))
        try await temp.store.close()
        let reopened = try SQLiteHeraldStore(path: temp.path)
        #expect(try await reopened.bindingCount() == 2)
        #expect(try await reopened.apply(Fixtures.change(nonce: 1, retainedUntil: future)) == .replayed)
        // Memory did not reload the expired nonce 2, but the table still holds it until it is pruned:
        // the database decides.
        #expect(try await reopened.apply(Fixtures.change(nonce: 2, retainedUntil: future)) == .replayed)
        #expect(try await reopened.pruneNonces(expiredBefore: 11) == 1)
        #expect(
            try await reopened.apply(Fixtures.change(nonce: 2, retainedUntil: future)) == .registered(created: false))
        try await reopened.close()

        // Tests/HeraldStoreTests/SQLite/this file: four levels below the package.
        let schemaFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "Schemas/sql/0001_initial.sql")
        for (identifier, sql) in Migrations.all {
            let file = identifier + ".sql"
            let url = schemaFile.deletingLastPathComponent().appendingPathComponent(file)
            let text = try String(contentsOf: url, encoding: .utf8)
            let body = text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")
            #expect(
                body.trimmingCharacters(in: .whitespacesAndNewlines)
                    == sql.trimmingCharacters(in: .whitespacesAndNewlines),
                "\(file)")
        }
    }

    @Test func theDatabaseRunsInWALWithFullSync() async throws {
        let temp = try TemporaryStore()
        defer { Task { await temp.cleanUp() } }
        let queue = try DatabaseQueue(path: temp.path)
        let mode = try await queue.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
    }
}
