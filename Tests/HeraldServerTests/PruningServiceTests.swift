import Foundation
import HeraldCore
import HeraldStore
import HeraldStoreSQLite
import Testing

@testable import HeraldServer

@Suite struct PruningServiceTests {
    @Test func expiredNoncesAndStaleBindingsArePrunedByTheService() async throws {
        let folder = NSTemporaryDirectory() + "herald-prune-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try SQLiteHeraldStore(path: folder + "/herald.sqlite")
        let key = try PrivateKey(hex: "0x107be946709e41b7895eea9f2dacf998a0a9124acbb786f0fd1a826101581a07")
        func change(_ token: Int, nonce: UInt64, now: Int64) -> DeviceChange {
            DeviceChange(
                action: .register, wallet: key.address, platform: .ios, deviceToken: String(format: "%064x", token),
                publicKey: key.publicKey, nonce: UInt256(nonce), operation: .random(), nonceRetainedUntil: now + 660,
                now: now,
                maxBindingsPerWallet: 20)
        }
        let day: Int64 = 86_400
        let now: Int64 = 2_000_000_000
        _ = try await store.apply(change(1, nonce: 1, now: now - 300 * day))  // stale: 300 days
        _ = try await store.apply(change(2, nonce: 2, now: now - 10 * day))  // fresh enough
        var configuration = HeraldSettings()
        configuration.bindings.expiryDays = 270
        let state = ServerState(configuration: configuration, store: store, clock: { now })
        await PruningService(state: state).pruneOnce()
        #expect(try await store.bindings(of: key.address).map(\.deviceToken) == [String(format: "%064x", 2)])
        // Both nonces are long past their retention and were dropped: the numbers are free again.
        #expect(try await store.apply(change(1, nonce: 1, now: now)) == .registered(created: true))
        #expect(
            String(decoding: state.metrics.render(), as: UTF8.self).contains(#"herald_pruned_total{kind="bindings"} 1"#)
        )
        try await store.close()
    }

    /// Retention with the service's clock: items past `retention.feedDays` go, then all but a wallet's
    /// newest `retention.feedItemsPerWallet`, with their notifications; an idle wallet's key goes in the
    /// hourly sweep. Each kind is counted.
    @Test func retentionPrunesOldItemsExtraItemsAndIdleKeysAndCountsThem() async throws {
        let folder = NSTemporaryDirectory() + "herald-retention-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try SQLiteHeraldStore(path: folder + "/herald.sqlite")
        let day: Int64 = 86_400
        let now: Int64 = 2_000_000_000
        let channel = try PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
        let reader = try PrivateKey(hex: "0x107be946709e41b7895eea9f2dacf998a0a9124acbb786f0fd1a826101581a07")
        let idle = try PrivateKey(bytes: Array(repeating: 0x22, count: 32))
        try await store.saveChannel(ChannelRecord(address: channel.address, name: "C", icon: "", url: "", createdAt: 1))
        for (nonce, age) in [400, 400, 400, 1, 1, 1].enumerated() {
            let payload = NotificationDraft(title: "t", body: "b").targetedPayload(to: [reader.address])
            let sent = (now - Int64(age) * day)
            _ = try await store.submit(
                NotificationSubmission(
                    channel: channel.address, publicKey: channel.publicKey,
                    payload: try NotificationPayload.parse(payload), nonce: UInt256(UInt64(nonce + 1)),
                    operation: .random(), nonceRetainedUntil: now + 600, now: sent, epoch: sent * 1000))
        }
        try await store.rememberPublicKey(idle.publicKey, of: idle.address, now: now - 300 * day)
        var configuration = HeraldSettings()
        configuration.retention.feedDays = 365
        configuration.retention.feedItemsPerWallet = 2
        let state = ServerState(configuration: configuration, store: store, clock: { now })
        await PruningService(state: state).pruneOnce()
        #expect(try await store.feed(of: reader.address, spam: true, limit: 10, offset: 0).total == 2)
        #expect(try await store.publicKey(of: idle.address) == nil)
        let metrics = String(decoding: state.metrics.render(), as: UTF8.self)
        for expected in [
            #"herald_pruned_total{kind="feed_items"} 4"#, #"herald_pruned_total{kind="notifications"} 4"#,
            #"herald_pruned_total{kind="wallet_keys"} 1"#,
        ] {
            #expect(metrics.contains(expected), "\(expected)")
        }
        try await store.close()
    }
}
