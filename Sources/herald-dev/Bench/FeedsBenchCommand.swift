import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldStore

struct FeedsBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feeds",
        abstract: "Feed page reads on a database seeded by `herald-dev bench broadcast`.",
        discussion: """
            Reads the first page (limit 10) of random bench subscribers' feeds at the store and prints the \
            latency percentiles. With --write-headers it also writes one line per subscriber, \
            `<path>\\t<Authorization header>` (FeedAccess signed now for --audience), for \
            `wrk -s scripts/load/feeds.lua URL -- FILE` against `herald serve` on the same database. \
            Between reads it times the store's health check (`SELECT 1`, through the same pool) as the floor \
            of any read: on PostgreSQL, a round trip through the driver and the loopback.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Database (file or PostgreSQL URL) seeded by `herald-dev bench broadcast`.")
    var database: String
    @Option(name: .long, help: "Distinct subscribers to read as.") var wallets: Int = 1_000
    @Option(name: .long, help: "Page reads to time.") var requests: Int = 20_000
    @Option(name: .long, help: "Page size.") var limit: Int = 10
    @Option(name: .customLong("write-headers"), help: "Write pre-signed feed requests for wrk to this file.")
    var writeHeaders: String?
    @Option(name: .long, help: "Audience of the server the headers are for.") var audience: String =
        "http://127.0.0.1:8080"
    @Option(name: .customLong("chain-id"), help: "Chain id of that server.") var chainId: UInt64 = 1

    func run() async throws {
        // A PostgreSQL URL is checked by opening it; a SQLite file must exist (opening would create it).
        guard
            database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
                || FileManager.default.fileExists(atPath: database)
        else {
            throw CLIError(.usage, "no database at \(database): seed one with `herald-dev bench broadcast --database`")
        }
        guard wallets > 0, requests > 0, (1...100).contains(limit) else {
            throw CLIError(.usage, "--wallets and --requests > 0, --limit 1–100")
        }
        let keys = try (0..<wallets).map(BenchWallets.subscriber)
        let addresses = keys.map(\.address)
        if let writeHeaders { try write(keys, to: writeHeaders) }
        let store = try await CommandStore.open(database)
        let first = try await store.feed(of: addresses[0], spam: false, limit: limit, offset: 0)
        guard first.total > 0 else {
            throw CLIError(.usage, "the bench subscribers have no items: run `herald-dev bench broadcast` first")
        }
        var samples: [Double] = []
        samples.reserveCapacity(requests)
        // Interleaved with the reads, so that both see the same machine.
        var floor: [Double] = []
        floor.reserveCapacity(requests)
        let progress = ProgressLine("bench feeds", total: requests, unit: "pages", json: global.json)
        for _ in 0..<requests {
            let wallet = addresses[Int.random(in: 0..<addresses.count)]
            let began = ContinuousClock.now
            let page = try await store.feed(of: wallet, spam: false, limit: limit, offset: 0)
            samples.append((ContinuousClock.now - began).seconds)
            if page.entries.isEmpty { throw CLIError(.unexpected, "an empty page for \(wallet)") }
            let probed = ContinuousClock.now
            try await store.checkHealth()
            floor.append((ContinuousClock.now - probed).seconds)
            progress.advance()
        }
        progress.finish()
        // The reads' own time, the probes between them left out.
        let total = samples.reduce(0, +)
        try await store.close()
        samples.sort()
        floor.sort()
        print(
            String(
                format:
                    "%d feed pages (limit %d, %d items per wallet) in %.2f s: %.0f/s; p50 %.3f ms, p99 %.3f ms, max %.3f ms",
                requests, limit, first.total, total, Double(requests) / total, BenchWallets.percentile(samples, 0.5),
                BenchWallets.percentile(samples, 0.99), (samples.last ?? 0) * 1000))
        print(
            String(
                format: "floor, the store's SELECT 1 between them: p50 %.3f ms, p99 %.3f ms, max %.3f ms",
                BenchWallets.percentile(floor, 0.5), BenchWallets.percentile(floor, 0.99), (floor.last ?? 0) * 1000))
    }

    private func write(_ keys: [PrivateKey], to path: String) throws {
        let now = UInt64(Date().timeIntervalSince1970)
        let domain = HeraldDomain(chainId: UInt256(chainId))
        var lines = ""
        for key in keys {
            let access = FeedAccess(
                wallet: key.address, audience: audience, issuedAt: UInt256(now), expiresAt: UInt256(now + 600))
            let header = try access.signed(with: key, scheme: .eip712, domain: domain).authorizationHeader
            lines += "/v1/users/\(key.address.checksummed)/feeds?page=1&limit=\(limit)\t\(header)\n"
        }
        try Data(lines.utf8).write(to: URL(fileURLWithPath: path))
        print("wrote \(keys.count) signed feed requests to \(path) (valid for 10 minutes)")
    }
}
