import Foundation
import HeraldCore
import HeraldStore
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
                publicKey: key.publicKey, nonce: UInt256(nonce), nonceRetainedUntil: now + 660, now: now,
                maxBindingsPerWallet: 20)
        }
        let day: Int64 = 86_400
        let now: Int64 = 2_000_000_000
        _ = try await store.apply(change(1, nonce: 1, now: now - 300 * day))  // stale: 300 days
        _ = try await store.apply(change(2, nonce: 2, now: now - 10 * day))  // fresh enough
        var configuration = ServerConfiguration()
        configuration.bindingExpiryDays = 270
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
}
