import HeraldCore
import HeraldStore
import HeraldStoreSQLite
import Testing

/// The key a FeedAccess read remembers (docs/protocol.md §3): written by the group-commit writer, sharing its
/// transactions, never a transaction and sync of its own; written once per wallet.
@Suite struct PublicKeyConformanceTests {
    @Test(arguments: StoreBackend.available)
    func keysOfFreshWalletsAreWrittenByTheGroupCommitWriterOnce(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let wallets = (100..<164).map(Fixtures.subscriber)
            let before = store.writerStatistics
            try await withThrowingTaskGroup(of: Void.self) { group in
                for key in wallets {
                    group.addTask { try await store.rememberPublicKey(key.publicKey, of: key.address, now: 1_000) }
                }
                try await group.waitForAll()
            }
            let after = store.writerStatistics
            #expect(after.writes - before.writes == wallets.count, "each key a write of the writer's")
            #expect(after.transactions - before.transactions <= wallets.count)
            for key in wallets { #expect(try await store.publicKey(of: key.address) == key.publicKey) }
            // Known now: remembering again writes nothing.
            for key in wallets { try await store.rememberPublicKey(key.publicKey, of: key.address, now: 2_000) }
            #expect(store.writerStatistics.writes == after.writes)
        }
    }
}
