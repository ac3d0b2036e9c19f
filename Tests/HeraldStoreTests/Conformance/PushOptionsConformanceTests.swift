import HeraldCore
import HeraldStore
import Testing

/// docs/protocol.md §11.4 on every backend: a notification's push options and its channel come back with
/// each of its pushes when they are claimed, for every recipient, retries included.
@Suite struct PushOptionsConformanceTests {
    @Test(arguments: StoreBackend.available)
    func everyPushOfAMessageCarriesItsOptionsAndChannel(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 2)
            let options = try PushOptions(priority: .normal, timeToLive: 90, collapseID: "price-ETH")
            let draft = NotificationDraft(title: "t", body: "b")
            let payload = NotificationDraft.payload(draft.broadcastPayload(), pushing: options)
            guard case .accepted(let optioned) = try await store.submit(Fixtures.submission(payload, nonce: 3)) else {
                throw StoreError("the send with options was refused")
            }
            _ = try await store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 4))
            let due = try await store.duePushes(now: 1_000, limit: 10)
            #expect(due.count == 4)
            let first = due.filter { optioned.sids.contains($0.sid ?? -1) }
            let second = due.filter { !optioned.sids.contains($0.sid ?? -1) }
            #expect(first.count == 2 && first.allSatisfy { $0.options == options })
            #expect(second.count == 2 && second.allSatisfy { $0.options == .none })
            #expect(due.allSatisfy { $0.channel == Fixtures.other.address })
            // A retry reads them again.
            try await store.record(first.map { PushAttemptResult(id: $0.id, disposition: .retry(at: 1_001)) })
            let again = try await store.duePushes(now: 1_001, limit: 10).filter { $0.options == options }
            #expect(again.count == 2)
        }
    }
}
