import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldStore

struct PushBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Delivery rate from the outbox to a local fake APNs, with the server's CPU and memory.",
        discussion: """
            Seeds a temporary database with --pushes queued pushes (a broadcast to as many subscribers with one iOS \
            binding each), starts `herald-dev fake-apns` and then `herald serve` on it as child processes, and waits \
            until the fake has accepted every push. Prints pushes/s (server start included), the best second, the \
            provider call's latency percentiles (from the server's histogram: upper bounds), the server's CPU per \
            push and peak RSS, and the fake's CPU per push, so the reader sees what the fake took of the machine. \
            scripts/load/push-bench.sh does the same for PostgreSQL, two nodes and an upstream relay.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Queued pushes to deliver.") var pushes: Int = 100_000
    @Option(name: .long, help: "The server's --push-concurrency.") var concurrency: Int = 100

    func validate() throws {
        guard (1...10_000_000).contains(pushes) else { throw ValidationError("--pushes must be 1…10,000,000") }
        guard (1...10_000).contains(concurrency) else { throw ValidationError("--concurrency must be 1…10,000") }
    }

    func run() async throws {
        let herald = try BenchExecutables.herald()
        let folder = NSTemporaryDirectory() + "herald-bench-push-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/push.sqlite"
        try await seed(database)
        let fake = try ChildProcess.start(
            BenchExecutables.heraldDev, ["fake-apns", "--port", "0", "--folder", folder + "/apns"],
            log: folder + "/fake.log")
        defer { fake.stop() }
        let apnsURL = try await fake.waitForLine(prefix: "fake APNs listening on ")
        let started = ContinuousClock.now
        let server = try ChildProcess.start(
            herald,
            [
                "serve", "--database", database, "--port", "0", "--rate-limit", "0", "--log-level", "warning",
                "--push-concurrency", String(concurrency), "--apns-key-file", folder + "/apns/AuthKey.p8",
                "--apns-key-id", "FAKEKEY001", "--apns-team-id", "FAKETEAM01", "--apns-topic", "org.example.herald",
                "--apns-host", apnsURL, "--apns-sandbox-host", apnsURL, "--apns-ca-file", folder + "/apns/ca.pem",
            ], log: folder + "/serve.log")
        defer { server.stop() }
        let progress = ProgressLine("delivering", total: pushes, unit: "pushes", json: global.json)
        var peakRSS = 0
        var accepted = 0
        var best = 0
        while accepted < pushes {
            try await Task.sleep(for: .milliseconds(250))
            guard server.isRunning else {
                throw CLIError(.unexpected, "herald serve exited: \(server.output().suffix(2000))")
            }
            peakRSS = max(peakRSS, server.sample()?.residentBytes ?? 0)
            let report = FakeAPNsReport(fake.output())
            progress.advance(by: report.accepted - accepted)
            accepted = report.accepted
            best = report.bestSecond
        }
        progress.finish()
        let seconds = (ContinuousClock.now - started).seconds
        let serverCPU = server.sample()?.cpuSeconds ?? 0
        let fakeCPU = fake.sample()?.cpuSeconds ?? 0
        let serverURL = try await server.waitForLine(prefix: "herald listening on ")
        let latency = await PushLatency.fetch(server: serverURL.split(separator: " ").first.map(String.init) ?? "")
        let result = Result(
            pushes: pushes, seconds: seconds, pushesPerSecond: Double(pushes) / seconds, bestSecond: best,
            concurrency: concurrency, latencyMillisecondsAtMost: latency,
            serverCPUMicrosecondsPerPush: serverCPU * 1e6 / Double(pushes), serverPeakRSSMegabytes: peakRSS >> 20,
            fakeCPUMicrosecondsPerPush: fakeCPU * 1e6 / Double(pushes))
        try result.print(json: global.json)
    }

    /// The queued pushes: the broadcast bench's subscribers and one broadcast, at the store.
    private func seed(_ database: String) async throws {
        let store = try await CommandStore.open(database)
        let channel = try BenchWallets.channel()
        try await store.saveChannel(BenchWallets.channelRecord(channel.address))
        let seeding = ProgressLine("seeding", total: pushes, unit: "subscribers", json: global.json)
        try await BroadcastBenchCommand.seed(store, channel: channel.address, from: 0, to: pushes, progress: seeding)
        seeding.finish()
        let now = Int64(Date().timeIntervalSince1970)
        let payload = try NotificationPayload.parse(
            NotificationDraft(title: "Bench", body: "Push delivery bench").broadcastPayload())
        let submission = NotificationSubmission(
            channel: channel.address, publicKey: channel.publicKey, payload: payload,
            nonce: UInt256.randomNonce(), operation: .random(), nonceRetainedUntil: now + 660, now: now,
            epoch: now * 1000)
        guard case .accepted = try await store.submit(submission) else {
            throw CLIError(.unexpected, "the bench broadcast was not accepted")
        }
        try await store.close()
    }

    struct Result: Encodable {
        let pushes: Int
        let seconds: Double
        let pushesPerSecond: Double
        let bestSecond: Int
        let concurrency: Int
        let latencyMillisecondsAtMost: [String: Double]
        let serverCPUMicrosecondsPerPush: Double
        let serverPeakRSSMegabytes: Int
        let fakeCPUMicrosecondsPerPush: Double

        func print(json: Bool) throws {
            if json {
                try Terminal.printJSON(self)
                return
            }
            Swift.print(
                String(
                    format:
                        "%d pushes in %.2f s (server start included): %.0f pushes/s, best second %d; concurrency %d",
                    pushes, seconds, pushesPerSecond, bestSecond, concurrency))
            let order = ["p50", "p90", "p99"]
            Swift.print(
                "provider call latency ms (histogram upper bounds): "
                    + order.map { key in
                        latencyMillisecondsAtMost[key].map { String(format: "%@ ≤ %g", key, $0) } ?? "\(key) ?"
                    }.joined(separator: "  "))
            Swift.print(
                String(
                    format: "server: %.0f µs CPU per push, peak RSS %d MB; fake APNs: %.0f µs CPU per push",
                    serverCPUMicrosecondsPerPush, serverPeakRSSMegabytes, fakeCPUMicrosecondsPerPush))
        }
    }
}

/// What the fake APNs prints once a second: `received N (M accepted), R/s`.
struct FakeAPNsReport {
    var accepted = 0
    var bestSecond = 0

    init(_ output: String) {
        for line in output.split(separator: "\n") where line.hasPrefix("received ") {
            let words = line.split(separator: " ")
            if words.count >= 4, let count = Int(words[2].dropFirst()) { accepted = count }
            if let rate = words.last.flatMap({ Int($0.dropLast(2)) }) { bestSecond = max(bestSecond, rate) }
        }
    }
}

/// Percentiles of `herald_push_duration_seconds` from the server's /metrics: each is the upper bound
/// of the bucket it falls in, in milliseconds.
enum PushLatency {
    static func fetch(server: String) async -> [String: Double] {
        guard let client = try? HeraldHTTPClient(server: server), let text = await client.metricsText() else {
            return [:]
        }
        return percentiles(text)
    }

    static func percentiles(_ metrics: String) -> [String: Double] {
        var buckets: [(bound: Double, count: Double)] = []
        for line in metrics.split(separator: "\n") where line.hasPrefix("herald_push_duration_seconds_bucket{") {
            guard let start = line.range(of: "le=\""), let end = line[start.upperBound...].firstIndex(of: "\""),
                let count = line.split(separator: " ").last.flatMap({ Double($0) })
            else { continue }
            let bound = line[start.upperBound..<end] == "+Inf" ? Double.infinity : Double(line[start.upperBound..<end])
            if let bound { buckets.append((bound, count)) }
        }
        // Several providers' series: sum the counts per bound.
        let merged = Dictionary(buckets.map { ($0.bound, $0.count) }, uniquingKeysWith: +).sorted { $0.key < $1.key }
        guard let total = merged.last?.value, total > 0 else { return [:] }
        var result: [String: Double] = [:]
        for (name, fraction) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)] {
            if let bucket = merged.first(where: { $0.value >= fraction * total }) {
                result[name] = bucket.key * 1000
            }
        }
        return result
    }
}
