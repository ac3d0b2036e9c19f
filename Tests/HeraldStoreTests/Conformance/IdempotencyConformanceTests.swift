import HeraldCore
import HeraldStore
import Testing

/// docs/protocol.md §11.2 on every backend: the same operation again (the same change value: the same
/// signer, nonce and digest) is answered its first outcome and changes nothing, whatever changed since;
/// another operation with the nonce is a replay; a refusal keeps nothing.
@Suite struct IdempotencyConformanceTests {
    @Test(arguments: StoreBackend.available)
    func aBindingChangeAgainIsAnsweredAsTheFirstTimeAndRefreshesNothing(_ backend: StoreBackend) async throws {
        try await backend.withStore { store async throws in
            let register = Fixtures.change(nonce: 1, now: 1_000)
            #expect(try await store.apply(register) == .registered(created: true))
            let unregister = Fixtures.change(.unregister, nonce: 2)
            #expect(try await store.apply(unregister) == .unregistered)
            #expect(try await store.apply(register) == .repeated(.registered(created: true)))
            #expect(try await store.apply(unregister) == .repeated(.unregistered))
            #expect(try await store.bindingCount() == 0, "the repeated register created nothing")

            let absent = Fixtures.change(.unregister, nonce: 3)
            #expect(try await store.apply(absent) == .absent)
            #expect(try await store.apply(absent) == .repeated(.absent))

            let again = Fixtures.change(nonce: 4, now: 1_000)
            #expect(try await store.apply(again) == .registered(created: true))
            let refresh = Fixtures.change(nonce: 5, now: 1_500)
            #expect(try await store.apply(refresh) == .registered(created: false))
            #expect(try await store.bindings(of: Fixtures.key.address).map(\.lastSeen) == [1_500])
            #expect(try await store.apply(again) == .repeated(.registered(created: true)))
            #expect(try await store.bindings(of: Fixtures.key.address).map(\.lastSeen) == [1_500], "no refresh")
            #expect(try await store.apply(Fixtures.change(nonce: 5)) == .replayed, "another operation")
        }
    }

    /// A refusal keeps no answer: the same change, applied once it fits, is evaluated afresh.
    @Test(arguments: StoreBackend.available)
    func aRefusedOperationIsEvaluatedAfresh(_ backend: StoreBackend) async throws {
        try await backend.withStore { store async throws in
            #expect(
                try await store.apply(Fixtures.change(token: Fixtures.token(1), nonce: 1, max: 1))
                    == .registered(created: true))
            let second = Fixtures.change(token: Fixtures.token(2), nonce: 2, max: 1)
            #expect(try await store.apply(second) == .overLimit)
            #expect(try await store.apply(second) == .overLimit)
            #expect(
                try await store.apply(Fixtures.change(.unregister, token: Fixtures.token(1), nonce: 3)) == .unregistered
            )
            #expect(try await store.apply(second) == .registered(created: true))
            #expect(try await store.apply(second) == .repeated(.registered(created: true)))
            // Over the limit again, the spent nonce still answers first: the kept answer.
            #expect(try await store.apply(Fixtures.change(token: Fixtures.token(1), nonce: 4, max: 1)) == .overLimit)
            #expect(try await store.apply(second) == .repeated(.registered(created: true)))
        }
    }

    @Test(arguments: StoreBackend.available)
    func aSendAgainAnswersItsSidsAndStoresAndQueuesNothing(_ backend: StoreBackend) async throws {
        try await backend.withStore { store async throws in
            try await Fixtures.seed(store, subscribers: 3)
            let broadcast = try Fixtures.submission(
                NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 1, policy: .unlimited)
            let first = try await store.submit(broadcast)
            guard case .accepted(let receipt) = first else {
                Issue.record("not accepted: \(first)")
                return
            }
            #expect(receipt.sids.count == 3 && receipt.pushes == 3)
            // A fourth subscriber meanwhile: the copy still answers three sids, and stores nothing.
            try await Fixtures.seed(store, subscribers: 4)
            #expect(try await store.submit(broadcast) == .repeated(first))
            #expect(
                try await store.feed(of: Fixtures.subscriber(3).address, spam: false, limit: 10, offset: 0).total == 0)
            #expect(try await store.pushCounts()["queued"] == 3)

            // A targeted send with a throttled recipient and a spam one keeps all of its answer.
            let policy = DeliveryPolicy(channelWalletPerHour: 60, channelWalletBurst: 1, channelBroadcastsPerHour: 0)
            let draft = NotificationDraft(title: "t", body: "b")
            let filling = try Fixtures.submission(
                draft.targetedPayload(to: [Fixtures.subscriber(0).address]), nonce: 2, policy: policy)
            _ = try await store.submit(filling)
            let targets = [Fixtures.subscriber(0).address, Fixtures.subscriber(9).address]
            let targeted = try Fixtures.submission(draft.targetedPayload(to: targets), nonce: 3, policy: policy)
            let sent = try await store.submit(targeted)
            guard case .accepted(let targetedReceipt) = sent else {
                Issue.record("not accepted: \(sent)")
                return
            }
            #expect(targetedReceipt.throttled == [Fixtures.subscriber(0).address])
            #expect(targetedReceipt.spam == 1 && targetedReceipt.sids.count == 1)
            #expect(try await store.submit(targeted) == .repeated(sent))
            #expect(
                try await store.feed(of: Fixtures.subscriber(9).address, spam: true, limit: 10, offset: 0).total == 1)
        }
    }

    @Test(arguments: StoreBackend.available)
    func subscriberControlAgainIsAnsweredAsTheFirstTime(_ backend: StoreBackend) async throws {
        try await backend.withStore { store async throws in
            try await Fixtures.seed(store, subscribers: 1)
            let subscriber = Fixtures.subscriber(0)
            let list = try Fixtures.channelSettings(#"[{"id":"news","kind":"toggle","default":true}]"#, nonce: 10)
            let listed = try await store.apply(list)
            #expect(try await store.apply(list) == .repeated(listed))

            let choice = try Fixtures.choices(#"{"news":false}"#, of: subscriber, nonce: 11)
            let chosen = try await store.apply(choice)
            #expect(try await store.apply(Fixtures.choices(#"{"news":true}"#, of: subscriber, nonce: 12)) != chosen)
            #expect(try await store.apply(choice) == .repeated(chosen))
            #expect(
                try await store.subscriptions(of: subscriber.address).first?.settings.first?.value == 1, "unchanged")

            let mute = Fixtures.mute(subscriber, until: 5_000, nonce: 13)
            #expect(try await store.apply(mute) == .muted(until: 5_000))
            #expect(try await store.apply(Fixtures.mute(subscriber, until: 0, nonce: 14)) == .muted(until: 0))
            #expect(try await store.apply(mute) == .repeated(.muted(until: 5_000)))
            #expect(try await store.subscriptions(of: subscriber.address).first?.mutedUntil(at: 1_000) == 0)

            let bot = Fixtures.subscriber(40).address
            let add = Fixtures.delegate(.add, bot, nonce: 15)
            #expect(try await store.apply(add) == .applied(.added))
            #expect(try await store.apply(Fixtures.delegate(.remove, bot, nonce: 16)) == .applied(.removed))
            #expect(try await store.apply(add) == .repeated(.applied(.added)))
            #expect(try await store.delegates(of: Fixtures.other.address) == [])
        }
    }

    @Test(arguments: StoreBackend.available)
    func aReadMarkAgainAnswersItsCountAndQueuesNoPush(_ backend: StoreBackend) async throws {
        try await backend.withStore { store async throws in
            try await Fixtures.seed(store, subscribers: 1)
            let subscriber = Fixtures.subscriber(0)
            let payload = NotificationDraft(title: "t", body: "b").broadcastPayload()
            guard case .accepted(let receipt) = try await store.submit(Fixtures.submission(payload, nonce: 1)) else {
                Issue.record("not accepted")
                return
            }
            _ = try await store.submit(Fixtures.submission(payload, nonce: 2))
            let mark = Fixtures.readMark(subscriber, sids: receipt.sids, nonce: 20)
            let marked = try await store.apply(mark)
            #expect(marked == .marked(unread: 1, pushes: 1))
            let queued = try await store.pushCounts()["queued"]
            _ = try await store.submit(Fixtures.submission(payload, nonce: 3))
            #expect(try await store.apply(mark) == .repeated(marked))
            #expect(try await store.pushCounts()["queued"] == (queued ?? 0) + 1, "only the third send's push")
            #expect(try await store.feed(of: subscriber.address, spam: false, limit: 10, offset: 0).unread == 2)
        }
    }

    /// A nonce spent before answers were kept (its row has no digest) answers every copy `replayed`.
    @Test(arguments: StoreBackend.available)
    func aNonceSpentWithoutAnAnswerIsAReplay(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database async throws in
            let register = Fixtures.change(nonce: 1)
            #expect(try await database.openStore().apply(register) == .registered(created: true))
            try await database.execute("UPDATE nonces SET operation = NULL, answer = NULL")
            #expect(try await database.openStore().apply(register) == .replayed)
        }
    }
}
