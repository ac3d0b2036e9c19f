import AsyncHTTPClient
import Foundation
import HeraldCLISupport
import NIOCore
import NIOHTTP1

/// Sends pre-signed bodies with a fixed number of concurrent keep-alive connections.
enum RegisterBenchLoad {
    struct Result: Encodable {
        let requests: Int
        let seconds: Double
        let requestsPerSecond: Double
        let latencyMilliseconds: [String: Double]
        let statuses: [String: Int]
        let transportErrors: Int
        /// The server's CPU time (user + system) over the load, per request, from its /metrics.
        var serverCPUMicrosecondsPerRequest: Double?
        /// What the server's store writer did over the load, from its /metrics.
        var storeWriter: ServerFigures.StoreWriter?

        func print(json: Bool) throws {
            if json {
                try Terminal.printJSON(self)
                return
            }
            Swift.print(String(format: "%d requests in %.2f s: %.0f requests/s", requests, seconds, requestsPerSecond))
            let order = ["p50", "p90", "p99", "max"]
            Swift.print(
                "latency ms: "
                    + order.map { String(format: "%@ %.2f", $0, latencyMilliseconds[$0] ?? 0) }.joined(separator: "  "))
            Swift.print(
                "statuses: "
                    + statuses.sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value)" }.joined(separator: ", ")
                    + (transportErrors > 0 ? ", transport errors × \(transportErrors)" : ""))
            if let cpu = serverCPUMicrosecondsPerRequest {
                Swift.print(
                    String(
                        format: "server CPU: %.0f µs per request (%.2f cores busy over the run)", cpu,
                        cpu * requestsPerSecond / 1e6))
            } else {
                Swift.print("server CPU: not published (the server's /metrics has no process_cpu_seconds_total)")
            }
            if let writer = storeWriter {
                Swift.print(
                    String(
                        format:
                            "store writer: %.1f writes a transaction, in transactions %.0f%% of the time, a write waited %.2f ms for its commit",
                        writer.writesPerTransaction, writer.busyShare * 100, writer.commitWaitMilliseconds))
            }
            if statuses["429"] != nil {
                Swift.print("note: 429s mean the server's rate limiter is on; run it with --rate-limit 0")
            }
        }
    }

    /// Per-worker tallies, merged at the end (no shared state while the load runs).
    struct Tally: Sendable {
        var latencies: [Double] = []
        var statuses: [Int: Int] = [:]
        var transportErrors = 0
    }

    static func run(
        bodies: [[UInt8]], url: String, concurrency: Int, progress: ProgressLine? = nil
    ) async throws -> Result {
        let start = ContinuousClock.now
        let tallies: [Tally]
        if let parsed = URL(string: url), parsed.scheme == "http", let host = parsed.host {
            tallies = try await PlainHTTPLoad.run(
                bodies: bodies, host: host, port: parsed.port ?? 80, path: parsed.path, concurrency: concurrency,
                progress: progress)
        } else {
            tallies = try await throughAsyncHTTPClient(
                bodies: bodies, url: url, concurrency: concurrency, progress: progress)
        }
        return summary(of: tallies, seconds: (ContinuousClock.now - start).seconds)
    }

    /// For `https://` servers: AsyncHTTPClient, whose own CPU competes with a local server's.
    static func throughAsyncHTTPClient(
        bodies: [[UInt8]], url: String, concurrency: Int, progress: ProgressLine?
    ) async throws -> [Tally] {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(30)))
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        configuration.connectionPool.idleTimeout = .seconds(60)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let tallies = await withTaskGroup(of: Tally.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var tally = Tally()
                    var index = worker
                    while index < bodies.count {
                        var request = HTTPClientRequest(url: url)
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: "application/json")
                        request.body = .bytes(ByteBuffer(bytes: bodies[index]))
                        let sent = ContinuousClock.now
                        do {
                            let response = try await client.execute(request, timeout: .seconds(30))
                            _ = try await response.body.collect(upTo: 1 << 16)
                            tally.latencies.append((ContinuousClock.now - sent).seconds * 1000)
                            tally.statuses[Int(response.status.code), default: 0] += 1
                        } catch {
                            tally.transportErrors += 1
                        }
                        progress?.advance()
                        index += concurrency
                    }
                    return tally
                }
            }
            return await group.reduce(into: [Tally]()) { $0.append($1) }
        }
        try await client.shutdown()
        return tallies
    }

    static func summary(of tallies: [Tally], seconds elapsed: Double) -> Result {
        var latencies = tallies.flatMap(\.latencies)
        latencies.sort()
        var statuses: [String: Int] = [:]
        for tally in tallies { for (status, count) in tally.statuses { statuses[String(status), default: 0] += count } }
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty
                ? 0 : latencies[min(latencies.count - 1, Int((Double(latencies.count) * p).rounded(.up)) - 1)]
        }
        let completed = latencies.count
        return Result(
            requests: completed, seconds: elapsed, requestsPerSecond: Double(completed) / elapsed,
            latencyMilliseconds: [
                "p50": percentile(0.5), "p90": percentile(0.9), "p99": percentile(0.99), "max": latencies.last ?? 0,
            ],
            statuses: statuses, transportErrors: tallies.reduce(0) { $0 + $1.transportErrors })
    }
}
