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
}
