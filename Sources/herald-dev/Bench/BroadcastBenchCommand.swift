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
    @Flag(
        name: .long,
        help: """
            Subscriber control (docs/protocol.md §10): the channel publishes a toggle and a threshold; a third of \
            the subscribers turn the toggle off, a third choose a threshold above the rounds' value, one in ten \
            mutes the channel. Rounds then name the toggle and the threshold in turn.
            """)
    var control = false

    /// The bench channel's settings under `--control`, and what its rounds name.
    static let controlSettings = """
        [{"id":"news","kind":"toggle","default":true},{"id":"min","kind":"threshold","min":0,"max":100,"default":10}]
        """
    static let roundSettings = [#"{"id":"news"}"#, #"{"id":"min","value":50}"#]

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
        if control, try await store.channelSettings(of: address)?.settings.isEmpty ?? true {
            let start = ContinuousClock.now
            let key = given == nil ? channel : nil
            try await Self.seedControl(store, channel: address, key: key, subscribers: subscribers)
            print(String(format: "seeded settings, choices and mutes in %.1f s", (ContinuousClock.now - start).seconds))
        }
        var times: [Double] = []
        // Rounds sign as the bench channel; a channel given by address is only seeded.
        for round in 1...max(rounds, 1) where rounds > 0 && given == nil {
            let now = Int64(Date().timeIntervalSince1970)
            var text = NotificationDraft(title: "Bench \(round)", body: "Broadcast round \(round)").broadcastPayload()
            if control { text = NotificationDraft.payload(text, naming: Self.roundSettings[(round - 1) % 2]) }
            let payload = try NotificationPayload.parse(text)
            // The broadcast limit is the server's (12 an hour by default); the bench times the write.
            let submission = NotificationSubmission(
                channel: channel.address, publicKey: channel.publicKey, payload: payload,
                nonce: UInt256.randomNonce(), operation: .random(), nonceRetainedUntil: now + 660, now: now,
                epoch: now * 1000, policy: DeliveryPolicy(channelBroadcastsPerHour: 0))
            let (receipt, seconds) = try await BenchWallets.commit(submission, to: store, what: "broadcast")
            times.append(seconds)
            print(
                String(
                    format: "broadcast %d: %d items and %d pushes committed in %.3f s", round, receipt.sids.count,
                    receipt.pushes, seconds)
                    + (control ? " (\(receipt.filtered) filtered, \(receipt.muted) muted)" : ""))
        }
        try await store.close()
        if global.json, !times.isEmpty {
            let sorted = times.sorted()
            try Terminal.printJSON(["subscribers": Double(subscribers), "medianSeconds": sorted[sorted.count / 2]])
        }
    }

    /// `--control`: the settings (signed by the bench channel; a channel given by address must publish its own),
    /// then each subscriber's choice and mute through the store's write path, 64 at a time.
    static func seedControl(
        _ store: any HeraldStore, channel: EthereumAddress, key: PrivateKey?, subscribers: Int
    ) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        let signed: @Sendable (PrivateKey, UInt64) -> SignedChange = { key, nonce in
            SignedChange(
                publicKey: key.publicKey, nonce: UInt256(nonce), operation: .random(), nonceRetainedUntil: now + 660,
                now: now)
        }
        if let key {
            let list = try ChannelSettingsList.parse(controlSettings)
            _ = try await store.apply(
                ChannelSettingsChange(channel: channel, list: list, signed: signed(key, 7_000_000_000)))
        }
        let off = try SettingChoices.parse(#"{"news":false}"#)
        let high = try SettingChoices.parse(#"{"min":90}"#)
        try await withThrowingTaskGroup(of: Void.self) { group in
            let workers = 64
            for worker in 0..<workers {
                group.addTask {
                    for index in stride(from: worker, to: subscribers, by: workers) {
                        let key = try BenchWallets.subscriber(index)
                        let nonce = UInt64(5_000_000_000 + 2 * index)
                        if index % 3 != 2 {
                            _ = try await store.apply(
                                SubscriberSettingsChange(
                                    channel: channel, subscriber: key.address, choices: index % 3 == 0 ? off : high,
                                    signed: signed(key, nonce)))
                        }
                        if index % 10 == 0 {
                            _ = try await store.apply(
                                MuteChange(
                                    channel: channel, subscriber: key.address, until: now + 86_400,
                                    signed: signed(key, nonce + 1)))
                        }
                    }
                }
            }
            try await group.waitForAll()
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
                                nonce: UInt256(UInt64(2 * index)), operation: .random(), nonceRetainedUntil: now + 660,
                                now: now))
                        _ = try await store.apply(
                            DeviceChange(
                                action: .register, wallet: wallet, platform: .ios,
                                deviceToken: BenchWallets.token(index), publicKey: key.publicKey,
                                nonce: UInt256(UInt64(2 * index + 1)), operation: .random(),
                                nonceRetainedUntil: now + 660, now: now,
                                maxBindingsPerWallet: 20))
                        progress?.advance()
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
