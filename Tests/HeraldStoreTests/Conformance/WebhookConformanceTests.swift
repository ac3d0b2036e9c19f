import Foundation
import HeraldCore
import HeraldStore
import Testing

/// docs/protocol.md §11.3's Webhook on every backend: one webhook a channel, set, replaced and removed with
/// the channel's nonce; an unknown channel spends nothing; the server's key is made once and kept.
@Suite struct WebhookConformanceTests {
    static func change(
        _ url: String, _ events: [WebhookEventKind] = WebhookEventKind.allCases, nonce: UInt64
    )
        -> WebhookChange
    {
        WebhookChange(
            channel: Fixtures.other.address, url: url, events: WebhookEventSet(Set(events)),
            signed: Fixtures.signed(Fixtures.other, nonce: nonce))
    }

    @Test(arguments: StoreBackend.available)
    func aWebhookIsSetReplacedAndRemoved(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 0)
            let channel = Fixtures.other.address
            #expect(try await store.apply(Self.change("", nonce: 1)) == .applied(.absent))
            #expect(try await store.webhook(of: channel) == nil)
            let set = Self.change("https://hooks.example.org/a", [.failed], nonce: 2)
            #expect(try await store.apply(set) == .applied(.set))
            #expect(
                try await store.webhook(of: channel)
                    == WebhookRecord(
                        channel: channel, url: "https://hooks.example.org/a", events: WebhookEventSet([.failed])))
            #expect(try await store.apply(Self.change("https://hooks.example.org/b", nonce: 3)) == .applied(.set))
            #expect(try await store.webhook(of: channel)?.url == "https://hooks.example.org/b")
            #expect(try await store.webhook(of: channel)?.events == .all)
            #expect(try await store.apply(set) == .repeated(.applied(.set)))
            #expect(
                try await store.webhook(of: channel)?.url == "https://hooks.example.org/b", "the copy changed nothing")
            #expect(try await store.apply(Self.change("", nonce: 4)) == .applied(.removed))
            #expect(try await store.webhook(of: channel) == nil)
        }
    }

    @Test(arguments: StoreBackend.available)
    func anUnknownChannelIsRefusedAndSpendsNothing(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let change = Self.change("https://hooks.example.org/a", nonce: 1)
            #expect(try await store.apply(change) == .unknownChannel)
            try await Fixtures.seed(store, subscribers: 0)
            #expect(try await store.apply(change) == .applied(.set))
        }
    }

    /// The first key stored stands: every store on the database, and every later start, reads it.
    @Test(arguments: StoreBackend.available)
    func theWebhookKeyIsMadeOnceAndShared(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database async throws in
            let first = Array(repeating: UInt8(7), count: 32)
            let second = Array(repeating: UInt8(9), count: 32)
            #expect(try await database.openStore().webhookKey(generated: first) == first)
            #expect(try await database.openStore().webhookKey(generated: second) == first)
        }
    }

    /// Nodes started together on a new database: each offers its own key, every one gets the same stored
    /// key. (On PostgreSQL a node whose insert waited for another's read the table with the snapshot
    /// from before that commit, found nothing and refused to start: `push-bench … postgres-2`, 2026-11-30.)
    @Test(arguments: StoreBackend.available)
    func nodesStartingTogetherAllGetTheOneKeyStored(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database async throws in
            var stores: [any TestStore] = []
            for _ in 0..<8 { stores.append(try await database.openStore()) }
            let keys = try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask {
                        try await store.webhookKey(generated: Array(repeating: UInt8(index + 1), count: 32))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(keys.count == 8)
            #expect(Set(keys).count == 1, "\(keys.map { $0[0] })")
            #expect((1...8).contains(Int(keys[0][0])))
        }
    }

    static func claim(
        _ store: any HeraldStore, now: Int64, owner: String = "a", maxAge: Int64 = 86_400
    )
        async throws -> WebhookBatch?
    {
        try await store.claimWebhookBatch(
            now: now, maxAgeSeconds: maxAge, owner: owner, leaseUntil: now + 30, limit: 100)
    }

    /// A Subscription that starts or ends a subscription queues its event when the webhook asks for the
    /// kind, in order; one that changes nothing queues nothing.
    @Test(arguments: StoreBackend.available)
    func subscriptionsQueueTheEventsTheWebhookAsksFor(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 0)
            #expect(
                try await store.apply(Self.change("https://h.example.org/", [.subscribed], nonce: 1)) == .applied(.set))
            let (a, b) = (Fixtures.subscriber(0), Fixtures.subscriber(1))
            _ = try await store.apply(Fixtures.subscription(key: a, nonce: 1))
            _ = try await store.apply(Fixtures.subscription(key: b, nonce: 1))
            _ = try await store.apply(Fixtures.subscription(key: a, nonce: 2))
            _ = try await store.apply(Fixtures.subscription(.unsubscribe, key: b, nonce: 2))
            #expect(try await store.queuedWebhookEventCount() == 2)
            let batch = try #require(try await Self.claim(store, now: 1_000))
            #expect(batch.url == "https://h.example.org/" && batch.attempts == 0)
            #expect(batch.events.map(\.kind) == [.subscribed, .subscribed])
            #expect(batch.events[0].id < batch.events[1].id)
            let first = try JSONParser.parse(
                WebhookEventPlanner.delivered(id: batch.events[0].id, kind: .subscribed, fields: batch.events[0].fields)
            )
            #expect(first["subscriber"] == .string(a.address.checksummed))
            #expect(first["channel"] == .string(Fixtures.other.address.checksummed))
            #expect(first["at"] == .number("900") && first["id"] == .string(String(batch.events[0].id)))
        }
    }

    /// One request at a time per webhook: a claim holds until its lease passes or its outcome is recorded;
    /// a retry waits for its time; a delivery removes its events; 410 removes the webhook.
    @Test(arguments: StoreBackend.available)
    func aBatchIsClaimedOnceRetriedAndDelivered(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 0)
            _ = try await store.apply(Self.change("https://h.example.org/", nonce: 1))
            _ = try await store.apply(Fixtures.subscription(key: Fixtures.subscriber(0), nonce: 1))
            let batch = try #require(try await Self.claim(store, now: 1_000))
            #expect(try await Self.claim(store, now: 1_000, owner: "b") == nil, "claimed by a")
            #expect(try await Self.claim(store, now: 1_031, owner: "b") != nil, "the lease passed")
            try await store.record(.retry(batch.channel, at: 1_100), owner: "b")
            #expect(try await Self.claim(store, now: 1_099) == nil)
            let again = try #require(try await Self.claim(store, now: 1_100))
            #expect(again.attempts == 1 && again.events == batch.events)
            _ = try await store.apply(Fixtures.subscription(key: Fixtures.subscriber(1), nonce: 1))
            try await store.record(.delivered(batch.channel, through: again.events.last?.id ?? 0), owner: "a")
            let next = try #require(try await Self.claim(store, now: 1_100))
            #expect(next.events.count == 1 && next.attempts == 0)
            try await store.record(.removed(batch.channel), owner: "a")
            #expect(try await store.webhook(of: batch.channel) == nil)
            #expect(try await store.queuedWebhookEventCount() == 0)
        }
    }

    /// An event older than the max age is dropped unsent; a replaced webhook keeps only the kinds it asks.
    @Test(arguments: StoreBackend.available)
    func oldEventsAndKindsNoLongerAskedForAreDropped(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 0)
            _ = try await store.apply(Self.change("https://h.example.org/", nonce: 1))
            _ = try await store.apply(Fixtures.subscription(key: Fixtures.subscriber(0), nonce: 1))
            _ = try await store.apply(Fixtures.subscription(.unsubscribe, key: Fixtures.subscriber(0), nonce: 2))
            #expect(try await store.queuedWebhookEventCount() == 2)
            _ = try await store.apply(Self.change("https://h.example.org/new", [.unsubscribed], nonce: 2))
            let batch = try #require(try await Self.claim(store, now: 1_000))
            #expect(batch.url == "https://h.example.org/new" && batch.events.map(\.kind) == [.unsubscribed])
            try await store.record(.retry(batch.channel, at: 1_000), owner: "a")
            #expect(try await Self.claim(store, now: 900 + 3_601, maxAge: 3_600) == nil)
            #expect(try await store.queuedWebhookEventCount() == 0)
        }
    }

    /// Each push of a channel's notification that ends unsent (failed, or pruned with its token) is one
    /// `failed` event with its sid, recipient, platform and reason; a sent one is none.
    @Test(arguments: StoreBackend.available)
    func pushesThatEndUnsentAreFailedEvents(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 3)
            _ = try await store.apply(Self.change("https://h.example.org/", [.failed], nonce: 1))
            _ = try await store.submit(
                Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 2))
            let pushes = try await store.claimDuePushes(
                now: 2_000, limit: 10, platforms: nil, owner: "w", leaseUntil: 2_030)
            #expect(pushes.count == 3)
            try await store.record(
                [
                    PushAttemptResult(id: pushes[0].id, disposition: .sent),
                    PushAttemptResult(id: pushes[1].id, disposition: .failed, error: "APNs 400 BadTopic"),
                    PushAttemptResult(id: pushes[2].id, disposition: .pruned, error: "APNs 410 Unregistered"),
                ], owner: "w")
            let batch = try #require(try await Self.claim(store, now: Int64(Date().timeIntervalSince1970)))
            let events = batch.events.map {
                (try? JSONParser.parse(WebhookEventPlanner.delivered(id: $0.id, kind: $0.kind, fields: $0.fields)))
                    ?? .null
            }
            #expect(events.map { $0["event"] } == [.string("failed"), .string("failed")])
            #expect(events.map { $0["reason"] } == [.string("APNs 400 BadTopic"), .string("APNs 410 Unregistered")])
            #expect(events.map { $0["sid"] } == [pushes[1].sid, pushes[2].sid].map { .string(String($0 ?? 0)) })
            #expect(
                events.map { $0["recipient"] } == [pushes[1].wallet, pushes[2].wallet].map { .string($0.checksummed) })
            #expect(events.allSatisfy { $0["platform"] == .string("ios") })
        }
    }
}
