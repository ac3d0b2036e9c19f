import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldStore

/// Deterministic wallets for benchmarks, so that a database seeded by one bench command can be read by
/// another (the feeds bench signs as the subscribers the broadcast bench created).
enum BenchWallets {
    static func key(_ label: String) throws -> PrivateKey {
        try PrivateKey(bytes: Keccak256.hash(Array("herald-bench-\(label)".utf8)))
    }

    static func channel() throws -> PrivateKey { try key("channel") }

    static func subscriber(_ index: Int) throws -> PrivateKey { try key("subscriber-\(index)") }

    static func token(_ index: Int) -> String { String(format: "%064x", index + 1) }

    static func channelRecord(_ address: EthereumAddress) -> ChannelRecord {
        ChannelRecord(
            address: address, name: "Bench", icon: "https://bench.example/i.png", url: "https://bench.example",
            createdAt: 0)
    }

    /// Commits one send at the store and times it; anything but an acceptance ends the bench.
    static func commit(
        _ submission: NotificationSubmission, to store: any HeraldStore, what: String
    ) async throws -> (receipt: NotificationReceipt, seconds: Double) {
        let start = ContinuousClock.now
        guard case .accepted(let receipt) = try await store.submit(submission) else {
            throw CLIError(.unexpected, "the \(what) was not accepted")
        }
        return (receipt, (ContinuousClock.now - start).seconds)
    }

    /// Latency percentiles in milliseconds of sorted samples (seconds).
    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] * 1000
    }
}
