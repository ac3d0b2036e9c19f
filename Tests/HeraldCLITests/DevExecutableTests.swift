import Testing

/// The shipped `herald` carries no test code: the benchmarks and the fakes of the push services are
/// `herald-dev`'s (CLI.md), and neither binary's help says otherwise.
@Suite struct DevExecutableTests {
    static let devCommands = ["bench", "fake-apns", "fake-fcm", "fake-webpush"]

    @Test func heraldListsNoBenchmarkAndNoFake() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let help = try cli.run(["--help"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.stdout.contains("serve"), "\(help.stdout)")
        for command in Self.devCommands {
            #expect(!help.stdout.contains(command), "\(command) in: \(help.stdout)")
        }
        #expect(try cli.run(["bench", "crypto"]).status == 64, "no longer a herald command")
    }

    @Test func heraldDevListsTheBenchmarksAndTheFakes() throws {
        let cli = try CLIRunner(executable: "herald-dev")
        defer { cli.cleanUp() }
        let help = try cli.run(["--help"])
        #expect(help.status == 0, "\(help.stderr)")
        for command in Self.devCommands {
            #expect(help.stdout.contains(command), "\(command) missing from: \(help.stdout)")
        }
        let bench = try cli.run(["bench", "--help"])
        #expect(bench.status == 0, "\(bench.stderr)")
        for name in ["crypto", "register", "store", "broadcast", "feeds", "inbox", "push", "webpush", "limiter"] {
            #expect(bench.stdout.contains("  \(name) "), "bench \(name) missing from: \(bench.stdout)")
        }
    }
}
