import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldStore

struct BroadcastBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broadcast",
        abstract: "Time to accept a type-1 broadcast (items and outbox rows committed) at the store.",
        discussion: """
            Seeds the database (default: a temporary one) with a channel and --subscribers subscribers, \
            each with one iOS binding, unless they are there already; then commits --rounds broadcasts \
            and prints each one's time. Ten rounds to 100,000 subscribers leave 1,000,000 feed items \
            for `herald-dev bench feeds`. The HTTP figure: `herald serve` on the same database, then `time \
            herald send --broadcast` (docs/benchmarks.md).
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Subscribers of the bench channel.") var subscribers: Int = 100_000
    @Option(name: .long, help: "Broadcasts to commit.") var rounds: Int = 3
    @Option(
        name: .long,
        help: "Database file or postgres:// URL (default: a temporary SQLite file, removed afterwards).")
    var database: String?
    @Option(
        name: .long,
        help: "Seed subscribers of this channel address instead (your wallet, to time `herald send --broadcast`).")
    var channel: String?

    func run() async throws {
        guard subscribers > 0, rounds >= 0 else { throw CLIError(.usage, "--subscribers > 0 and --rounds ≥ 0") }
        let folder = NSTemporaryDirectory() + "herald-bench-broadcast-\(UUID().uuidString)"
        let path = database ?? folder + "/bench.sqlite"
        defer { if database == nil { try? FileManager.default.removeItem(atPath: folder) } }
        let given = try channel.map { try EthereumAddress.argument($0, what: "a channel address") }
        if given != nil && rounds > 0 && self.database == nil {
            throw CLIError(.usage, "--channel seeds a database to send to: give --database too")
        }
        let store = try await CommandStore.open(path)
        let channel = try BenchWallets.channel()
        let address = given ?? channel.address
        try await store.saveChannel(BenchWallets.channelRecord(address))
        let existing = try await store.subscriberCount(of: address)
        if existing < subscribers {
            let start = ContinuousClock.now
            let progress = ProgressLine(
                "seeding", total: subscribers - existing, unit: "subscribers", json: global.json)
            try await Self.seed(store, channel: address, from: existing, to: subscribers, progress: progress)
            progress.finish()
            let seconds = (ContinuousClock.now - start).seconds
            print(
                String(
                    format: "seeded %d subscribers with one binding each in %.1f s", subscribers - existing, seconds))
        }
        var times: [Double] = []
        // Rounds sign as the bench channel; a channel given by address is only seeded.
        for round in 1...max(rounds, 1) where rounds > 0 && given == nil {
            let now = Int64(Date().timeIntervalSince1970)
            let payload = try NotificationPayload.parse(
                NotificationDraft(title: "Bench \(round)", body: "Broadcast round \(round)").broadcastPayload())
            let submission = NotificationSubmission(
                channel: channel.address, publicKey: channel.publicKey, payload: payload,
                nonce: UInt256.randomNonce(), nonceRetainedUntil: now + 660, now: now,
                epoch: now * 1000)
            let start = ContinuousClock.now
            guard case .accepted(let receipt) = try await store.submit(submission) else {
                throw CLIError(.unexpected, "the broadcast was not accepted")
            }
            let seconds = (ContinuousClock.now - start).seconds
            times.append(seconds)
            print(
                String(
                    format: "broadcast %d: %d items and %d pushes committed in %.3f s", round, receipt.sids.count,
                    receipt.pushes, seconds))
        }
        try await store.close()
        if global.json, !times.isEmpty {
            let sorted = times.sorted()
            try Terminal.printJSON(["subscribers": Double(subscribers), "medianSeconds": sorted[sorted.count / 2]])
        }
    }

    /// Subscriptions and bindings through the store's own write path (group commit), 64 at a time.
    static func seed(
        _ store: any HeraldStore, channel: EthereumAddress, from: Int, to: Int, progress: ProgressLine? = nil
    ) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        try await withThrowingTaskGroup(of: Void.self) { group in
            let workers = 64
            for worker in 0..<workers {
                group.addTask {
                    for index in stride(from: from + worker, to: to, by: workers) {
                        let key = try BenchWallets.subscriber(index)
                        let wallet = key.address
                        _ = try await store.apply(
                            SubscriptionChange(
                                action: .subscribe, channel: channel, subscriber: wallet, publicKey: key.publicKey,
                                nonce: UInt256(UInt64(2 * index)), nonceRetainedUntil: now + 660, now: now))
                        _ = try await store.apply(
                            DeviceChange(
                                action: .register, wallet: wallet, platform: .ios,
                                deviceToken: BenchWallets.token(index), publicKey: key.publicKey,
                                nonce: UInt256(UInt64(2 * index + 1)), nonceRetainedUntil: now + 660, now: now,
                                maxBindingsPerWallet: 20))
                        progress?.advance()
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
