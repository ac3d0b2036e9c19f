import HeraldCore
import HeraldStore
import Testing

@testable import HeraldStorePostgres

/// PostgreSQL's broadcast answers its sids as a range when they are contiguous and reads them back when
/// they are not (another node's items took values of the shared sequence in between).
@Suite(.enabled(if: PostgresTestServer.isConfigured, "set \(PostgresTestServer.variable) to test PostgreSQL"))
struct PostgresBroadcastTests {
    @Test func contiguousSidsAreAnsweredAsTheirRange() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            try await Fixtures.seed(store, subscribers: 6)
            let receipt = try await broadcast(to: store)
            let stored = try await database.integers("SELECT sid FROM feed_items ORDER BY sid")
            #expect(receipt.sids == stored)
            #expect(receipt.sids.count == 6)
            #expect(receipt.pushes == 6)
        }
    }

    /// A sequence that steps by 3 leaves gaps as other nodes' inserts would: every sid is still answered,
    /// in the subscribers' order, and no other.
    @Test func sidsWithGapsAreReadBack() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            try await Fixtures.seed(store, subscribers: 6)
            try await database.execute("ALTER TABLE feed_items ALTER COLUMN sid SET INCREMENT BY 3")
            let receipt = try await broadcast(to: store)
            let stored = try await database.integers("SELECT sid FROM feed_items ORDER BY sid")
            #expect(receipt.sids == stored)
            #expect(receipt.sids.count == 6)
            #expect(zip(receipt.sids, receipt.sids.dropFirst()).allSatisfy { $1 - $0 == 3 })
            let byRecipient = try await database.integers("SELECT sid FROM feed_items ORDER BY recipient")
            #expect(byRecipient == stored, "sids follow the subscribers' order")
        }
    }

    /// A broadcast's time grows with its channel: it is not answered `unavailable` at the store's usual
    /// bound (here 2 s), which still bounds a targeted send held up the same way.
    @Test func aBroadcastMayTakeLongerThanTheUsualBound() async throws {
        try await TestDatabase.with { database in
            try await Fixtures.seed(try await database.open(), subscribers: 2)
            let store = try await database.open(answerTimeout: .seconds(2))
            let hold = Task {
                try await database.execute(
                    "DO $$ BEGIN LOCK TABLE feed_items IN EXCLUSIVE MODE; PERFORM pg_sleep(4); END $$")
            }
            try await Task.sleep(for: .milliseconds(500))
            let targeted = try Fixtures.submission(
                NotificationDraft(title: "t", body: "b").targetedPayload(to: [Fixtures.subscriber(0).address]),
                nonce: 20, policy: .unlimited)
            let late = Task { try await store.submit(targeted) }
            let receipt = try await broadcast(to: store)
            #expect(receipt.sids.count == 2)
            let error = await #expect(throws: StoreError.self) { _ = try await late.value }
            // Answered by the store's bound or by its batch's (the same 2 s; whichever looks first).
            #expect(error?.code == .unavailable)
            #expect(error?.description.contains("within 2 s") == true)
            try await hold.value
        }
    }

    @Test func onlyTypeOneIsABroadcastForTheWriter() throws {
        let broadcast = try Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 1)
        #expect(PostgresWrite.notification(broadcast).isBroadcast)
        let targeted = try Fixtures.submission(
            NotificationDraft(title: "t", body: "b").targetedPayload(to: [Fixtures.subscriber(0).address]), nonce: 2)
        #expect(!PostgresWrite.notification(targeted).isBroadcast)
    }

    private func broadcast(to store: PostgresHeraldStore) async throws -> NotificationReceipt {
        let submission = try Fixtures.submission(
            NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 10, policy: .unlimited)
        guard case .accepted(let receipt) = try await store.submit(submission) else {
            throw StoreError("the broadcast was not accepted")
        }
        return receipt
    }
}
