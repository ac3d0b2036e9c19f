import HeraldCore
import HeraldStore
import Testing

/// Channels, subscriptions and remembered public keys: the `HeraldStore` contract, on every backend.
@Suite struct ChannelConformanceTests {
    @Test(arguments: StoreBackend.available)
    func channelsAndSubscriptions(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let channel = Fixtures.other.address
            let follower = Fixtures.subscriber(0)
            // Unknown channel: nothing changes and the nonce is not spent.
            #expect(try await store.apply(Fixtures.subscription(key: follower, nonce: 1)) == .unknownChannel)
            try await store.saveChannel(ChannelRecord(address: channel, name: "Old", icon: "", url: "", createdAt: 5))
            try await store.saveChannel(
                ChannelRecord(address: channel, name: "Desk", icon: "i", url: "u", createdAt: 9))
            #expect(
                try await store.channel(channel)
                    == ChannelRecord(address: channel, name: "Desk", icon: "i", url: "u", createdAt: 5))
            try await store.saveChannel(
                ChannelRecord(address: Fixtures.key.address, name: "Alpha", icon: "", url: "", createdAt: 1))
            #expect(try await store.channels().map(\.name) == ["Alpha", "Desk"])

            #expect(try await store.apply(Fixtures.subscription(key: follower, nonce: 1)) == .subscribed(created: true))
            #expect(try await store.apply(Fixtures.subscription(key: follower, nonce: 1)) == .replayed)
            #expect(
                try await store.apply(Fixtures.subscription(key: follower, nonce: 2)) == .subscribed(created: false))
            _ = try await store.apply(
                Fixtures.subscription(channel: Fixtures.key.address, key: follower, nonce: 3, now: 950))
            #expect(try await store.subscriberCount(of: channel) == 1)
            #expect(
                try await store.subscriptions(of: follower.address)
                    == [
                        SubscriptionRecord(channel: channel, name: "Desk", since: 900),
                        SubscriptionRecord(channel: Fixtures.key.address, name: "Alpha", since: 950),
                    ])
            #expect(
                try await store.apply(Fixtures.subscription(.unsubscribe, key: follower, nonce: 4))
                    == .unsubscribed(existed: true))
            #expect(
                try await store.apply(Fixtures.subscription(.unsubscribe, key: follower, nonce: 5))
                    == .unsubscribed(existed: false))
            #expect(try await store.publicKey(of: follower.address) == follower.publicKey)

            #expect(try await store.removeChannel(Fixtures.key.address))
            #expect(try await store.removeChannel(Fixtures.key.address) == false)
            #expect(try await store.subscriptions(of: follower.address).isEmpty, "its subscriptions went with it")
            #expect(try await store.channel(Fixtures.key.address) == nil)
        }
    }

    /// A wallet's key never changes (its address is the key's hash): the first one remembered stands,
    /// whichever store (process, node) is told another later.
    @Test(arguments: StoreBackend.available)
    func theFirstPublicKeyOfAWalletStands(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let store = try await database.openStore()
            try await store.rememberPublicKey(Fixtures.key.publicKey, of: Fixtures.key.address, now: 1)
            try await store.rememberPublicKey(Fixtures.other.publicKey, of: Fixtures.key.address, now: 2)
            let other = try await database.openStore()
            try await other.rememberPublicKey(Fixtures.other.publicKey, of: Fixtures.key.address, now: 3)
            #expect(try await other.publicKey(of: Fixtures.key.address) == Fixtures.key.publicKey)
            #expect(try await store.publicKey(of: Fixtures.key.address) == Fixtures.key.publicKey)
        }
    }
}
