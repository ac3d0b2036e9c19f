import Foundation
import Testing

/// The benchmarks (`herald-dev bench …`) print the figures docs/benchmarks.md quotes; these runs are tiny
/// and assert what is printed, never how fast.
@Suite struct BenchCommandsTests {
    @Test func benchLimiterPrintsTheTimePerRequestAndTheBucketsHeld() throws {
        let cli = try CLIRunner(executable: "herald-dev")
        defer { cli.cleanUp() }
        let result = try cli.run(["bench", "limiter", "--clients", "3000", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect(json["clients"] as? Int == 3000)
        #expect(json["tracked"] as? Int == 3000, "one bucket per client, none dropped while there is room")
        #expect(json["capacity"] as? Int == 262_144 && json["tableBytes"] as? Int == 8_388_608)
        #expect((json["p99Microseconds"] as? Double ?? 0) > 0)
    }

    @Test func benchPushDeliversEveryPushAndPrintsTheCostsOfBothProcesses() throws {
        let cli = try CLIRunner(executable: "herald-dev")
        defer { cli.cleanUp() }
        let result = try cli.run(["bench", "push", "--pushes", "60", "--concurrency", "8", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect(json["pushes"] as? Int == 60)
        #expect(json["concurrency"] as? Int == 8)
        #expect((json["serverCPUMicrosecondsPerPush"] as? Double ?? 0) > 0)
        #expect((json["fakeCPUMicrosecondsPerPush"] as? Double ?? 0) > 0)
        #expect((json["serverPeakRSSMegabytes"] as? Int ?? 0) > 0)
        // Every push went through the provider, so the server's histogram has a median.
        let latency = try #require(json["latencyMillisecondsAtMost"] as? [String: Double])
        #expect(latency["p50"] != nil)
    }

    @Test func benchRegisterSendsEveryRegistrationAndPrintsTheServersCPUAndItsWriter() async throws {
        let folder = NSTemporaryDirectory() + "herald-bench-register-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try ServerProcess(databasePath: folder + "/bench.sqlite")
        try await server.start()
        defer { server.kill(SIGKILL) }
        let cli = try CLIRunner(executable: "herald-dev")
        defer { cli.cleanUp() }
        // Plain http://: the connections write the requests' bytes themselves (PlainHTTPLoad).
        let result = try cli.run([
            "bench", "register", "--server", server.baseURL, "--requests", "45", "--concurrency", "4", "--json",
        ])
        try #require(result.status == 0, "\(result.stderr)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect(json["requests"] as? Int == 45)
        #expect(json["statuses"] as? [String: Int] == ["200": 45], "every registration verified and stored")
        #expect(json["transportErrors"] as? Int == 0)
        #expect((json["serverCPUMicrosecondsPerRequest"] as? Double ?? 0) > 0)
        // The store writer's figures over the run, from the server's /metrics.
        let writer = try #require(json["storeWriter"] as? [String: Double], "\(result.stdout)")
        #expect((writer["writesPerTransaction"] ?? 0) >= 1)
        #expect((writer["busyShare"] ?? 0) > 0)
        #expect((writer["commitWaitMilliseconds"] ?? 0) > 0)
        let latency = try #require(json["latencyMilliseconds"] as? [String: Double])
        #expect((latency["p50"] ?? 0) > 0 && (latency["max"] ?? 0) >= (latency["p99"] ?? 0))
    }

    @Test func benchPushRefusesNonsense() throws {
        let cli = try CLIRunner(executable: "herald-dev")
        defer { cli.cleanUp() }
        #expect(try cli.run(["bench", "push", "--pushes", "0"]).status == 64)
    }

    /// The feed reads and, between them, the floor every read pays (the store's `SELECT 1`).
    @Test func benchFeedsPrintsThePagesAndTheFloorBesideThem() throws {
        let folder = NSTemporaryDirectory() + "herald-bench-feeds-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/bench.sqlite"
        let cli = try CLIRunner(executable: "herald-dev")
        defer { cli.cleanUp() }
        let seeded = try cli.run(["bench", "broadcast", "--database", database, "--subscribers", "12", "--rounds", "2"])
        try #require(seeded.status == 0, "\(seeded.stderr)")
        let result = try cli.run(["bench", "feeds", "--database", database, "--wallets", "12", "--requests", "40"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("40 feed pages (limit 10, 2 items per wallet) in "), "\(result.stdout)")
        let floor = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("floor, ") })
        #expect(floor.contains("p50 ") && floor.contains("p99 "), "\(floor)")
    }
}
