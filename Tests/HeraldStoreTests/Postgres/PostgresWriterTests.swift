import HeraldCore
import HeraldStore
import Testing

@testable import HeraldStorePostgres

/// The PostgreSQL writer's own behaviour: a batch whose transaction fails is run again one write at a
/// time, so that one bad write fails alone (SQLite's writer has no such split: nothing its SQL refuses
/// reaches it).
@Suite(.enabled(if: PostgresTestServer.isConfigured, "set \(PostgresTestServer.variable) to test PostgreSQL"))
struct PostgresWriterTests {
    /// PostgreSQL's text cannot hold U+0000: a device token with one is refused by the server, and only
    /// that change fails; the writes that shared its batch (same signer, so same lane) commit.
    /// (Notifications cannot carry U+0000 this far: the payload parser refuses it.)
    @Test func aWriteThePostgreSQLServerRefusesFailsAloneInItsBatch() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            let refused = Fixtures.change(key: Fixtures.other, token: "nul \u{0000} here", nonce: 50, max: 100)
            // Until a batch holds the refused write and others (the first write may go alone).
            var rounds = 0
            while store.writer.splitBatches == 0 && rounds < 20 {
                rounds += 1
                let base = UInt64(1_000 * rounds)
                let results = await withTaskGroup(of: (Int, Bool).self) { group in
                    for index in 0..<40 {
                        group.addTask {
                            let change = Fixtures.change(
                                key: Fixtures.other, token: Fixtures.token(index), nonce: base + UInt64(index),
                                max: 100)
                            return (index, (try? await store.apply(change)) != nil)
                        }
                        if index == 20 { group.addTask { (-1, (try? await store.apply(refused)) != nil) } }
                    }
                    return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
                }
                #expect(results[-1] == false, "the refused change fails")
                #expect(results.filter { $0.key >= 0 && $0.value }.count == 40, "every other write commits")
            }
            #expect(store.writer.splitBatches > 0, "the refused write shared a batch")
            #expect(try await store.bindings(of: Fixtures.other.address).count == 40)
            // Nothing of the refused one was stored, its nonce included.
            #expect(
                try await store.apply(
                    Fixtures.change(key: Fixtures.other, token: Fixtures.token(99), nonce: 50, max: 100))
                    == .registered(created: true))
        }
    }

    /// Registrations of distinct wallets that share a batch are read and written by two statements for
    /// all of them, each decided as it would be alone: new bindings (with their setup confirmations), a
    /// refresh, one over its wallet's limit (nothing spent), a copy of an applied one (its first answer),
    /// and one the server refuses (U+0000), which fails alone once the batch runs one write at a time.
    @Test func registrationsSharingABatchAreEachDecidedAsAlone() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            let refreshed = Fixtures.subscriber(1)
            let full = Fixtures.subscriber(2)
            _ = try await store.apply(Fixtures.change(key: refreshed, token: Fixtures.token(1), nonce: 1))
            _ = try await store.apply(Fixtures.change(key: full, token: Fixtures.token(2), nonce: 1))
            let applied = Fixtures.change(key: Fixtures.subscriber(3), token: Fixtures.token(3), nonce: 1)
            #expect(try await store.apply(applied) == .registered(created: true))
            var rounds = 0
            var created = 1
            // Rounds without the refused one until a batch held several registrations (no batch is split, so
            // every answer came from the batched statements), then one round with it.
            var withRefused = false
            while !withRefused && rounds < 20 {
                rounds += 1
                withRefused = store.writer.batchedRegistrations > 0
                #expect(store.writer.splitBatches == 0)
                let round = UInt64(rounds)
                let fresh = (0..<30).map { Fixtures.subscriber(1_000 * rounds + $0) }
                let refused = Fixtures.change(
                    key: Fixtures.subscriber(1_000 * rounds + 999), token: "nul \u{0000}", nonce: 1)
                let results = await withTaskGroup(of: (String, DeviceChangeOutcome?).self) { group in
                    for (index, key) in fresh.enumerated() {
                        group.addTask {
                            let change = Fixtures.change(
                                key: key, token: Fixtures.token(index), nonce: 1, confirm: true)
                            return ("fresh", try? await store.apply(change))
                        }
                    }
                    group.addTask {
                        let change = Fixtures.change(key: refreshed, token: Fixtures.token(1), nonce: 10 + round)
                        return ("refresh", try? await store.apply(change))
                    }
                    group.addTask {
                        let change = Fixtures.change(key: full, token: Fixtures.token(50), nonce: 10 + round, max: 1)
                        return ("full", try? await store.apply(change))
                    }
                    group.addTask { ("copy", try? await store.apply(applied)) }
                    if withRefused { group.addTask { ("refused", try? await store.apply(refused)) } }
                    return await group.reduce(into: [(String, DeviceChangeOutcome?)]()) { $0.append($1) }
                }
                created += fresh.count
                for (kind, outcome) in results {
                    switch kind {
                    case "fresh": #expect(outcome == .registered(created: true))
                    case "copy": #expect(outcome == .repeated(.registered(created: true)))
                    case "refresh": #expect(outcome == .registered(created: false))
                    case "full": #expect(outcome == .overLimit)
                    default: #expect(outcome == nil, "the refused registration fails")
                    }
                }
            }
            #expect(store.writer.batchedRegistrations > 0, "registrations shared a batch")
            #expect(try await store.bindings(of: full.address).count == 1)
            #expect(try await store.bindings(of: refreshed.address).count == 1)
            #expect(try await database.integers("SELECT count(*) FROM bindings") == [Int64(created + 2)])
            // A setup confirmation for each fresh binding, and only for those.
            #expect(try await database.integers("SELECT count(*) FROM push_outbox") == [Int64(created - 1)])
            // The over-limit registrations spent nothing: the same nonce is still free.
            #expect(
                try await store.apply(Fixtures.change(key: full, token: Fixtures.token(2), nonce: 11))
                    == .registered(created: false))
        }
    }
}
