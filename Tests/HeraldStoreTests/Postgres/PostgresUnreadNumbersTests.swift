import HeraldCore
import HeraldStore
import PostgresNIO
import Testing

@testable import HeraldStorePostgres

/// Migration 0015 keeps a wallet's unread number as items added less items taken away, in two rows: a
/// send holds each recipient's `added` row until it commits (a million-recipient broadcast, for seconds),
/// and a read mark, which changes only `taken`, must not wait for it: it would hold its write lane, and
/// every registration batched with it, that long.
@Suite(.enabled(if: PostgresTestServer.isConfigured, "set \(PostgresTestServer.variable) to test PostgreSQL"))
struct PostgresUnreadNumbersTests {
    @Test func aReadMarkDoesNotWaitForASendInFlightToItsWallet() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open(answerTimeout: .seconds(3))
            try await Fixtures.seed(store, subscribers: 1)
            let reader = Fixtures.subscriber(0)
            let draft = NotificationDraft(title: "t", body: "b")
            let outcome = try await store.submit(
                Fixtures.submission(draft.targetedPayload(to: [reader.address]), nonce: 10))
            guard case .accepted(let receipt) = outcome else { throw StoreError("not accepted: \(outcome)") }
            try await database.withConnection { connection in
                // A send in flight to the reader: its transaction has raised the reader's `added` and holds it.
                for statement in [
                    "BEGIN",
                    "UPDATE wallet_unread_added SET added = added + 1 WHERE wallet = '\\x\(reader.address.lowercased.dropFirst(2))'",
                ] {
                    _ = try await connection.query(
                        PostgresQuery(unsafeSQL: statement), logger: PostgresTestServer.logger
                    )
                    .rows { _ in () }
                }
                let marked = try await store.apply(Fixtures.readMark(reader, sids: receipt.sids, nonce: 11))
                #expect(marked == .marked(unread: 0, pushes: 1))
                _ = try await connection.query("ROLLBACK", logger: PostgresTestServer.logger).rows { _ in () }
            }
            #expect(try await store.feed(of: reader.address, spam: false, limit: 10, offset: 0).unread == 0)
        }
    }
}
