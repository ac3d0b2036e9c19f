import Crypto
import HeraldCore
import HeraldStore
import Testing

/// Web Push bindings (docs/protocol.md §9) on every backend: a device binding of platform `webpush` whose
/// token is the endpoint, with keys that a register replaces.
@Suite struct WebPushConformanceTests {
    static let endpoint = "https://ntfy.example.org/upAbC123?up=1"

    static func subscription(endpoint: String = endpoint) throws -> WebPushSubscription {
        try WebPushSubscription(
            endpoint: endpoint,
            p256dh: Base64URL.encode(Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)),
            auth: Base64URL.encode(SecureRandom.bytes(16)))
    }

    static func change(
        _ subscription: WebPushSubscription, action: DeviceChange.Action = .register, nonce: UInt64,
        now: Int64 = 1_000, max: Int = 20, confirm: Bool = false
    ) -> DeviceChange {
        DeviceChange(
            action: action, wallet: Fixtures.key.address, platform: .webpush, deviceToken: subscription.endpoint,
            publicKey: Fixtures.key.publicKey, nonce: UInt256(nonce), operation: .random(), nonceRetainedUntil: 2_000,
            now: now,
            maxBindingsPerWallet: max, queueSetupConfirmation: confirm,
            webPush: action == .register ? subscription : nil)
    }

    @Test(arguments: StoreBackend.available)
    func registerStoresKeysAndAReRegisterReplacesThem(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let first = try Self.subscription()
            let created = try await store.apply(Self.change(first, nonce: 1, confirm: true))
            #expect(created == .registered(created: true))
            let stored = try await store.webPushSubscription(of: Fixtures.key.address, endpoint: Self.endpoint)
            #expect(stored == first)
            let second = try Self.subscription()
            let refreshed = try await store.apply(Self.change(second, nonce: 2, now: 1_500, confirm: true))
            #expect(refreshed == .registered(created: false))
            let replaced = try await store.webPushSubscription(of: Fixtures.key.address, endpoint: Self.endpoint)
            #expect(replaced == second)
            let bindings = try await store.bindings(of: Fixtures.key.address)
            #expect(bindings.map(\.platform) == [.webpush])
            #expect(bindings.first?.deviceToken == Self.endpoint && bindings.first?.lastSeen == 1_500)
            // One setup confirmation: for the creation, none for the refresh.
            let due = try await store.duePushes(now: 2_000, limit: 10, platforms: [.webpush])
            #expect(due.count == 1)
            #expect(due.first?.platform == .webpush && due.first?.deviceToken == Self.endpoint && due.first?.sid == nil)
            let otherWallet = try await store.webPushSubscription(of: Fixtures.other.address, endpoint: Self.endpoint)
            #expect(otherWallet == nil)
        }
    }

    @Test(arguments: StoreBackend.available)
    func webPushBindingsCountTowardsTheLimitAndUnregisterRemovesThem(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let device = try await store.apply(Fixtures.change(nonce: 1, max: 2))
            #expect(device == .registered(created: true))
            let webPush = try await store.apply(Self.change(try Self.subscription(), nonce: 2, max: 2))
            #expect(webPush == .registered(created: true))
            let third = try await store.apply(
                Self.change(try Self.subscription(endpoint: "https://push.example.org/other"), nonce: 3, max: 2))
            #expect(third == .overLimit)
            let removed = try await store.apply(Self.change(try Self.subscription(), action: .unregister, nonce: 4))
            #expect(removed == .unregistered)
            let absent = try await store.apply(Self.change(try Self.subscription(), action: .unregister, nonce: 5))
            #expect(absent == .absent)
            let keys = try await store.webPushSubscription(of: Fixtures.key.address, endpoint: Self.endpoint)
            #expect(keys == nil)
            #expect(try await store.bindingCount() == 1)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aDeadEndpointRemovesItsBindingAndItsQueuedPushIsUnbound(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            _ = try await store.apply(Self.change(try Self.subscription(), nonce: 1, confirm: true))
            let removed = try await store.removeBindings(platform: .webpush, deviceToken: Self.endpoint)
            #expect(removed == 1)
            let due = try await store.claimDuePushes(
                now: 2_000, limit: 10, platforms: [.webpush], owner: "a", leaseUntil: 2_060)
            #expect(due.count == 1)
            #expect(due.first?.bound == false)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aClaimCarriesTheBindingsCurrentKeysAndNoneForADevice(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            _ = try await store.apply(Fixtures.change(nonce: 1, confirm: true))
            let first = try Self.subscription()
            _ = try await store.apply(Self.change(first, nonce: 2, confirm: true))
            let claimed = try await store.claimDuePushes(
                now: 2_000, limit: 10, platforms: nil, owner: "a", leaseUntil: 2_060)
            #expect(claimed.count == 2)
            let webPush = try #require(claimed.first { $0.platform == .webpush })
            #expect(webPush.webPushSubscription == first && webPush.bound)
            #expect(claimed.first { $0.platform != .webpush }?.webPushSubscription == nil)

            // A re-registration's keys apply to the pushes claimed after it.
            let second = try Self.subscription()
            _ = try await store.apply(Self.change(second, nonce: 3, now: 1_500))
            try await store.record(claimed.map { PushAttemptResult(id: $0.id, disposition: .retry(at: 2_000)) })
            let again = try await store.claimDuePushes(
                now: 2_000, limit: 10, platforms: [.webpush], owner: "a", leaseUntil: 2_060)
            #expect(again.map(\.webPushSubscription) == [second])
            let due = try await store.duePushes(now: 2_000, limit: 10, platforms: [.webpush])
            #expect(due.map(\.webPushSubscription) == [second])
        }
    }
}
