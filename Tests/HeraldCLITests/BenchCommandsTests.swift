import Foundation
import Testing

/// The benchmarks print the figures docs/benchmarks.md quotes; these runs are tiny and assert what is
/// printed, never how fast.
@Suite struct BenchCommandsTests {
    @Test func benchPushDeliversEveryPushAndPrintsTheCostsOfBothProcesses() throws {
        let cli = try CLIRunner()
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

    @Test func benchPushRefusesNonsense() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run(["bench", "push", "--pushes", "0"]).status == 64)
    }
}
