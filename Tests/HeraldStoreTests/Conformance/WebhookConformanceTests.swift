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
}
