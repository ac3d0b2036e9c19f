import Foundation
import HeraldCore
import HeraldStore
import Testing

/// What a store's database keeps across closing, opening again and other stores opened on it, and what
/// a closed store does: the `HeraldStore` contract, on every backend.
@Suite struct StoreLifecycleConformanceTests {
    /// Nonce 1 is still within its retention by the wall clock (a store may load such nonces into memory
    /// when it opens); nonce 2 expired long ago but is not pruned yet: the database, not a memory
    /// reloaded at open, judges both.
    @Test(arguments: StoreBackend.available)
    func dataSurvivesReopening(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let future = Int64(Date().timeIntervalSince1970) + 3_600
            let store = try await database.openStore()
            _ = try await store.apply(Fixtures.change(nonce: 1, retainedUntil: future))
            _ = try await store.apply(Fixtures.change(token: Fixtures.token(9), nonce: 2, retainedUntil: 10))
            try await store.close()
            let reopened = try await database.openStore()
            #expect(try await reopened.bindingCount() == 2)
            #expect(try await reopened.apply(Fixtures.change(nonce: 1, retainedUntil: future)) == .replayed)
            #expect(try await reopened.apply(Fixtures.change(nonce: 2, retainedUntil: future)) == .replayed)
            #expect(try await reopened.pruneNonces(expiredBefore: 11) == 1)
            #expect(
                try await reopened.apply(Fixtures.change(nonce: 2, retainedUntil: future))
                    == .registered(created: false))
            #expect(try await reopened.publicKey(of: Fixtures.key.address) == Fixtures.key.publicKey)
        }
    }

    /// Two stores on one database stand for two processes or nodes: the second's memory never saw the
    /// first's spends, so only the database can refuse their replays.
    @Test(arguments: StoreBackend.available)
    func theDatabaseNotMemoryJudgesAReplay(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let a = try await database.openStore()
            let b = try await database.openStore()
            #expect(try await a.apply(Fixtures.change(nonce: 41)) == .registered(created: true))
            #expect(try await b.apply(Fixtures.change(nonce: 41)) == .replayed)
            #expect(try await b.apply(Fixtures.change(.unregister, nonce: 41)) == .replayed)
            #expect(try await b.bindingCount() == 1, "the replay changed nothing")
            // The same operation through the other store: the first answer, kept in the database.
            let register = Fixtures.change(token: String(repeating: "c", count: 64), nonce: 44)
            #expect(try await b.apply(register) == .registered(created: true))
            #expect(try await a.apply(register) == .repeated(.registered(created: true)))
            #expect(try await a.bindingCount() == 2)

            try await Fixtures.seed(a, subscribers: 1)
            let send = try Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 3)
            let sent = try await b.submit(send)
            guard case .accepted(let receipt) = sent else {
                Issue.record("the broadcast was not accepted: \(sent)")
                return
            }
            #expect(receipt.sids.count == 1)
            #expect(try await a.submit(send) == .repeated(sent))
            #expect(try await b.apply(Fixtures.subscription(key: Fixtures.subscriber(0), nonce: 1)) == .replayed)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aClosedStoreRefusesWork(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await store.checkHealth()
            try await store.close()
            await #expect(throws: StoreError.self) { try await store.apply(Fixtures.change(nonce: 1)) }
            await #expect(throws: StoreError.self) { try await store.checkHealth() }
            await #expect(throws: StoreError.self) { try await store.bindingCount() }
            await #expect(throws: StoreError.self) { try await store.publicKey(of: Fixtures.key.address) }
            // Closing again is harmless.
            try await store.close()
        }
    }
}
