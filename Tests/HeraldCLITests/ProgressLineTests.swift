import Foundation
import HeraldCLISupport
import HeraldTesting
import Testing

/// Long commands show a progress line to a person at a terminal, and nothing to a pipe or `--json`.
@Suite struct ProgressLineTests {
    /// About two seconds of work with a progress step after each timed round (`keystore unlock` takes
    /// at least a second), so a line is due well past the 300 ms delay.
    static let bench = ["bench", "crypto", "--seconds", "0.1", "--rounds", "1"]

    @Test(arguments: [
        (json: false, terminal: true, shown: true),
        (json: true, terminal: true, shown: false),
        (json: false, terminal: false, shown: false),
        (json: true, terminal: false, shown: false),
    ])
    func aLineOnlyForATerminalOutsideJSONMode(json: Bool, terminal: Bool, shown: Bool) {
        #expect(ProgressLine.shows(json: json, stderrIsTerminal: terminal) == shown)
    }

    @Test func theLineShowsCountTotalRateElapsedAndETA() {
        #expect(
            ProgressLine.render(
                label: "bench store", done: 2500, total: 10000, unit: "registrations", seconds: 2, showsRate: true)
                == "bench store: 2500/10000 registrations (25%) · 1250/s · 2.0 s · eta 6 s")
        #expect(
            ProgressLine.render(
                label: "inbox sync", done: 300, total: nil, unit: "items", seconds: 0.5, showsRate: true,
                note: "page 3") == "inbox sync: 300 items · 600/s · 0.5 s · page 3")
        #expect(
            ProgressLine.render(label: "bench crypto", done: 3, total: 8, unit: "rounds", seconds: 4, showsRate: false)
                == "bench crypto: 3/8 rounds (37%) · 4.0 s · eta 7 s")
    }

    @Test func aPipedStderrGetsNoProgressLine() throws {
        let runner = try CLIRunner(executable: "herald-dev")
        defer { runner.cleanUp() }
        let output = try runner.run(Self.bench)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("recover + address"))
        #expect(!output.stderr.contains("\r") && !output.stdout.contains("\r"), "\(output.stderr)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func aTerminalSeesTheLineRewrittenThenCleared() throws {
        let screen = try Self.underTerminal(Self.bench)
        #expect(screen.contains("\rbench crypto: "), "\(screen)")
        #expect(screen.contains(" rounds ("), "\(screen)")
        // Cleared before the results: the last progress text is followed by an erase, not left behind.
        #expect(screen.contains("\r\u{1B}[K"), "\(screen)")
        #expect(screen.contains("recover + address"))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func jsonModeShowsNoLineEvenOnATerminal() throws {
        let screen = try Self.underTerminal(Self.bench + ["--json"])
        #expect(!screen.contains("bench crypto:"), "\(screen)")
        #expect(screen.contains("\"recoverRatioToBareC\""), "\(screen)")
    }

    /// Runs herald-dev with a pseudo-terminal for stdin, stdout and stderr (util-linux `script`), and
    /// returns what the terminal received.
    static func underTerminal(_ arguments: [String]) throws -> String {
        let runner = try CLIRunner()
        defer { runner.cleanUp() }
        let command = ([try CLIRunner.binary("herald-dev").path] + arguments).map(Self.shellQuoted).joined(
            separator: " ")
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["--quiet", "--return", "--command", command, "/dev/null"]
        process.environment = runner.environment
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = PipeDrain(out).waitForEnd()
        process.waitUntilExit()
        let screen = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(screen)")
        return screen
    }

    static func shellQuoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
