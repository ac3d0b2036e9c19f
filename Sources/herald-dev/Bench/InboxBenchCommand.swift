import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldInbox
import HeraldTesting

struct InboxBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inbox",
        abstract: "`herald inbox list` on a cache of --rows items: in process, and as a whole command.",
        discussion: """
            Builds a throwaway home (a light keystore wallet and inbox.sqlite with --rows items), then \
            times opening the cache and reading the first page in process, and runs `herald inbox list` \
            itself --runs times, timing each from spawn to exit.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Cached items.") var rows: Int = 100_000
    @Option(name: .long, help: "Timed runs of each kind.") var runs: Int = 30
    @Flag(name: .long, help: "Keep the bench home and print its path.") var keep = false

    func run() async throws {
        guard rows > 0, runs > 0 else { throw CLIError(.usage, "--rows and --runs must be > 0") }
        let herald = try BenchExecutables.herald()
        let home = NSTemporaryDirectory() + "herald-bench-inbox-\(UUID().uuidString)"
        defer { if !keep { try? FileManager.default.removeItem(atPath: home) } }
        let key = PrivateKey.generate()
        // A light keystore, as `herald wallet create --light` writes it: `inbox list` opens the home's wallet.
        _ = try KeystoreDirectory(path: home + "/keystore").add(
            Keystore(encrypting: key, passphrase: "bench", kdf: .lightScrypt(), name: "bench"))
        let path = home + "/inbox.sqlite"
        let seedStart = ContinuousClock.now
        let seeding = ProgressLine("caching", total: rows, unit: "items", json: global.json)
        try Self.seed(InboxStore(path: path), wallet: key.address, rows: rows, progress: seeding)
        seeding.finish()
        print(String(format: "cached %d items in %.1f s", rows, (ContinuousClock.now - seedStart).seconds))

        var inProcess: [Double] = []
        for _ in 0..<runs {
            let began = ContinuousClock.now
            let page = try InboxStore(path: path).list(wallet: key.address, limit: 20)
            inProcess.append((ContinuousClock.now - began).seconds)
            guard page.count == 20 else { throw CLIError(.unexpected, "a page of \(page.count) rows") }
        }
        var command: [Double] = []
        let progress = ProgressLine("herald inbox list", total: runs, unit: "runs", json: global.json)
        for _ in 0..<runs {
            command.append(try Self.timeCommand(herald, home: home))
            progress.advance()
        }
        progress.finish()
        for (label, samples) in [
            ("open + first page, in process", inProcess), ("`herald inbox list`, spawn to exit", command),
        ] {
            let sorted = samples.sorted()
            print(
                String(
                    format: "%@: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d runs)", label,
                    BenchWallets.percentile(sorted, 0.5), BenchWallets.percentile(sorted, 0.99),
                    (sorted.last ?? 0) * 1000, sorted.count))
        }
        if keep { print("bench home: \(home) (passphrase: bench)") }
    }

    static func seed(_ store: InboxStore, wallet: EthereumAddress, rows: Int, progress: ProgressLine? = nil) throws {
        let epoch = Int64(Date().timeIntervalSince1970 * 1000) - Int64(rows) * 1000
        for chunk in stride(from: 0, to: rows, by: 10_000) {
            let items = (chunk..<min(rows, chunk + 10_000)).map { index -> FeedItem in
                let channel = index % 7
                let epochOfItem: Int64 = epoch + Int64(index) * 1000
                return FeedItem(
                    sid: Int64(index + 1), type: index % 3 == 0 ? 1 : 3, app: "Channel \(channel)",
                    icon: "https://c.example/\(channel).png", url: "https://c.example", secret: "",
                    subject: "Subject \(index)", message: "Message number \(index) of the benchmark inbox",
                    callToAction: "", image: "", epoch: epochOfItem)
            }
            try store.insert(items, wallet: wallet)
            progress?.advance(by: items.count)
        }
    }

    /// Runs `herald inbox list --home HOME`, output discarded.
    static func timeCommand(_ herald: URL, home: String) throws -> Double {
        let process = SpawnedProcess()
        process.executableURL = herald
        process.arguments = ["inbox", "list", "--home", home]
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("HERALD_") { environment.removeValue(forKey: name) }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let began = ContinuousClock.now
        try process.run()
        process.waitUntilExit()
        let seconds = (ContinuousClock.now - began).seconds
        guard process.terminationStatus == 0 else {
            throw CLIError(.unexpected, "herald inbox list exited \(process.terminationStatus)")
        }
        return seconds
    }
}
