import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldStore

/// `herald-dev bench subset`: the cost of docs/protocol.md §10's per-wallet buckets on a large type 4.
struct SubsetBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subset",
        abstract: "Time to accept a type-4 send to --recipients subscribers at the store, every bucket touched.",
        discussion: """
            Seeds the database (default: a temporary one) with the bench channel's --recipients subscribers, \
            each with one iOS binding, then commits --rounds type-4 sends to all of them under the default \
            limits (30 a recipient at once, 60 an hour), so that each send reads and writes one bucket per \
            recipient; prints each send's time. scripts/load/subset-bench.sh runs it on both backends and \
            reads PostgreSQL's statements per send.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Recipients of each send (at most 1000).") var recipients: Int = 1000
    @Option(name: .long, help: "Sends to commit (at most 30: the buckets' burst; 0 only seeds).") var rounds: Int = 10
    @Option(
        name: .long,
        help: "Database file or postgres:// URL (default: a temporary SQLite file, removed afterwards).")
    var database: String?

    func run() async throws {
        guard (1...NotificationPayload.maximumRecipients).contains(recipients), (0...30).contains(rounds) else {
            throw CLIError(.usage, "--recipients 1…1000 and --rounds 0…30 (0: only seed)")
        }
        let folder = NSTemporaryDirectory() + "herald-bench-subset-\(UUID().uuidString)"
        let path = database ?? folder + "/bench.sqlite"
        defer { if database == nil { try? FileManager.default.removeItem(atPath: folder) } }
        let store = try await CommandStore.open(path)
        let channel = try BenchWallets.channel()
        try await store.saveChannel(BenchWallets.channelRecord(channel.address))
        let existing = try await store.subscriberCount(of: channel.address)
        if existing < recipients {
            try await BroadcastBenchCommand.seed(store, channel: channel.address, from: existing, to: recipients)
        }
        let wallets = try (0..<recipients).map { try BenchWallets.subscriber($0).address }
        let text = NotificationDraft(title: "Subset", body: "To each of them").targetedPayload(to: wallets)
        var times: [Double] = []
        let payload = try NotificationPayload.parse(text)
        for round in stride(from: 1, through: rounds, by: 1) {
            let now = Int64(Date().timeIntervalSince1970)
            let submission = NotificationSubmission(
                channel: channel.address, publicKey: channel.publicKey, payload: payload,
                nonce: UInt256.randomNonce(), operation: .random(), nonceRetainedUntil: now + 660, now: now,
                epoch: now * 1000,
                policy: DeliveryPolicy())
            let (receipt, seconds) = try await BenchWallets.commit(submission, to: store, what: "send")
            times.append(seconds)
            print(
                String(
                    format: "send %d: %d items, %d pushes, %d throttled, committed in %.1f ms", round,
                    receipt.sids.count, receipt.pushes, receipt.throttled.count, seconds * 1000))
        }
        try await store.close()
        guard !times.isEmpty else { return }
        let median = BenchWallets.percentile(times.sorted(), 0.5)
        print(String(format: "median %.1f ms a send, %.1f µs a recipient", median, median * 1000 / Double(recipients)))
    }
}
