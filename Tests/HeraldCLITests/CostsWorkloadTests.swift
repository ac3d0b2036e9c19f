import Foundation
import HeraldTesting
import Testing

/// The instruction-count guard's workload (`herald-costs`, run under callgrind by scripts/costs/check.sh)
/// must keep doing the work its budgets price: here it runs natively, small, and every request of it
/// must succeed (it exits 1 on any refusal, which would make the count cheaper for the wrong reason).
@Suite struct CostsWorkloadTests {
    static func binary() throws -> URL {
        try CLIRunner.binary().deletingLastPathComponent().appendingPathComponent("herald-costs")
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = SpawnedProcess()
        process.executableURL = try binary()
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = PipeDrain(pipe).waitForEnd()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func theWorkloadRunsEveryPhaseWithEveryRequestAccepted() throws {
        let (status, output) = try Self.run(["24", "40"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("phase registrations 24 registrations "))
        #expect(output.contains("phase broadcast 40 recipients "))
        // Every registration's setup confirmation and every recipient's push, drained.
        #expect(output.contains("phase pushes 64 pushes "))
        // make test installs valgrind first, so the phases can be counted.
        #expect(!output.contains("cannot be counted"))
    }

    @Test func badArgumentsAreAUsageError() throws {
        #expect(try Self.run(["0"]).status == 64)
        #expect(try Self.run(["many"]).status == 64)
    }
}
