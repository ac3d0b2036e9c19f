import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldStore

struct StoreBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Registrations/s of the SQLite store alone (group commit, no HTTP, no signatures).",
        discussion: "Writes to a temporary database unless --database names one; removes the temporary one afterwards."
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: "Number of registrations.") var changes: Int = 100_000
    @Option(name: .long, help: "Concurrent submitters.") var concurrency: Int = 64
    @Option(name: .long, help: "Distinct wallets (16 tokens each by default).") var wallets: Int?
    @Option(name: .long, help: "Database: a SQLite file or a postgres:// URL (default: a temporary SQLite file).")
    var database: String?

    func run() async throws {
        guard (1...10_000_000).contains(changes), (1...4096).contains(concurrency) else {
            throw CLIError(.usage, "--changes must be 1…10,000,000 and --concurrency 1…4096")
        }
        if let wallets, !(1...changes).contains(wallets) { throw CLIError(.usage, "--wallets must be 1…--changes") }
        let folder = NSTemporaryDirectory() + "herald-bench-store-\(UUID().uuidString)"
        let path = database ?? folder + "/bench.sqlite"
        defer { if database == nil { try? FileManager.default.removeItem(atPath: folder) } }
        let store = try await CommandStore.open(path, poolSize: 16)
        let key = PrivateKey.generate()
        let walletCount = wallets ?? max(1, changes / 16)
        let addresses = try (0..<walletCount).map { _ in try EthereumAddress(bytes: SecureRandom.bytes(20)) }
        let now = Int64(Date().timeIntervalSince1970)
        let runId = SecureRandom.bytes(8)
        let preparing = ProgressLine("preparing", total: changes, unit: "registrations", json: global.json)
        let work = (0..<changes).map { index in
            preparing.advance()
            return DeviceChange(
                action: .register, wallet: addresses[index % walletCount], platform: .ios,
                deviceToken: Hex.encode(
                    runId + withUnsafeBytes(of: UInt64(index).bigEndian, Array.init) + [UInt8](repeating: 0, count: 16)),
                publicKey: key.publicKey, nonce: UInt256(UInt64(index)), operation: .random(),
                nonceRetainedUntil: now + 660, now: now,
                maxBindingsPerWallet: 1_000_000)
        }
        preparing.finish()
        let progress = ProgressLine("bench store", total: changes, unit: "registrations", json: global.json)
        let start = ContinuousClock.now
        let failures = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var failed = 0
                    for index in stride(from: worker, to: work.count, by: concurrency) {
                        if case .registered = try await store.apply(work[index]) {} else { failed += 1 }
                        progress.advance()
                    }
                    return failed
                }
            }
            return try await group.reduce(0, +)
        }
        progress.finish()
        let seconds = (ContinuousClock.now - start).seconds
        try await store.close()
        let rate = Double(changes) / seconds
        if global.json {
            try Terminal.printJSON([
                "changes": Double(changes), "seconds": seconds, "perSecond": rate, "failures": Double(failures),
            ])
        } else {
            print(
                String(
                    format: "%d registrations in %.2f s: %.0f/s (%d not registered)", changes, seconds, rate, failures))
        }
    }
}
