import Foundation
import HeraldTesting
import Testing

/// `docs/getting-started.md` is run as written: its shell blocks, in order, against the built `herald`
/// and `herald-dev` (the fake APNs and the server in the background, on free ports and in a folder of
/// their own), and each block's stdout must match the output block the page shows after it, `…`
/// standing for any text (a line of `…` alone for any number of lines). Then the fake APNs must have
/// received the tour's three pushes.
@Suite struct GettingStartedTests {
    static let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/getting-started.md")

    @Test func theTourRunsAsThePageShowsIt() async throws {
        let tour = try TourPage(String(contentsOf: Self.page, encoding: .utf8))
        #expect(tour.steps.count >= 8, "the page's shell blocks were read")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tour-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let binaries = try CLIRunner.binary().deletingLastPathComponent().path
        let rewrite = [
            ("/tmp/herald-tour", folder.path), ("8443", String(try FreePort.find())),
            ("8080", String(try FreePort.find())),
        ]
        var shell = TourShell(binaries: binaries, rewrite: rewrite)
        defer {
            shell.stopBackground()
            try? FileManager.default.removeItem(at: folder)
        }
        for step in tour.steps {
            let expected = step.expected.map { shell.rewritten($0) }
            let output: String
            if step.isBackground {
                output = try await shell.startBackground(step.script, linesWanted: TourMatch.fixedLines(expected))
            } else {
                let run = try shell.run(step.script)
                #expect(run.status == 0, "\(step.script)\nexit \(run.status): \(run.stderr)")
                output = run.stdout
            }
            if let expected {
                #expect(
                    TourMatch.matches(expected, output),
                    "\(step.script)\n--- the page shows:\n\(expected)\n--- it printed:\n\(output)")
            }
        }
        let fake = try #require(shell.background.first)
        let arrived = try await eventually(30) { fake.text.contains("received 3 (3 accepted)") }
        #expect(arrived, "the fake APNs got the setup confirmation and both messages:\n\(fake.text)")
    }
}

/// The page's shell blocks, each with the output block that follows it, if any.
struct TourPage {
    struct Step {
        let script: String
        let expected: String?
        /// The fake APNs and the server: they run until the end of the tour.
        var isBackground: Bool {
            script.hasPrefix("herald-dev fake-apns") || script.hasPrefix("herald serve")
        }
    }

    let steps: [Step]

    init(_ text: String) throws {
        var blocks: [(tag: String, body: String)] = []
        var current: (tag: String, lines: [String])?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                if let open = current {
                    blocks.append((open.tag, open.lines.joined(separator: "\n")))
                    current = nil
                } else {
                    current = (String(line.dropFirst(3)), [])
                }
            } else if current != nil {
                current?.lines.append(line)
            }
        }
        var steps: [Step] = []
        for (index, block) in blocks.enumerated() where block.tag == "sh" {
            let next = index + 1 < blocks.count ? blocks[index + 1] : nil
            steps.append(Step(script: block.body, expected: next?.tag == "" ? next?.body : nil))
        }
        self.steps = steps
    }
}

/// Runs the tour's blocks as a reader's shell would: `export`s carry over, `make build` is what the test
/// already has, the binaries are on `PATH`.
struct TourShell {
    let binaries: String
    let rewrite: [(String, String)]
    private var exports: [String] = []
    private(set) var background: [BackgroundCommand] = []

    init(binaries: String, rewrite: [(String, String)]) {
        self.binaries = binaries
        self.rewrite = rewrite
    }

    func rewritten(_ text: String) -> String {
        rewrite.reduce(text) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
    }

    private var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        environment["PATH"] = binaries + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        return environment
    }

    /// The block as a script: earlier exports first; `make build` and the `PATH` export left out.
    private mutating func script(_ block: String) -> String {
        var lines: [String] = []
        for line in rewritten(block).split(separator: "\n").map(String.init) {
            let command = line.split(separator: "#", maxSplits: 1).first.map(String.init) ?? line
            if command.hasPrefix("make ") || command.hasPrefix("export PATH=") { continue }
            if command.hasPrefix("export ") { exports.append(line) }
            lines.append(line)
        }
        return (["set -e"] + exports + lines).joined(separator: "\n")
    }

    mutating func run(_ block: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script(block)]
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = PipeDrain(out)
        let stderr = PipeDrain(err)
        let outData = stdout.waitForEnd()
        let errData = stderr.waitForEnd()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outData, as: UTF8.self),
            String(decoding: errData, as: UTF8.self)
        )
    }

    /// Starts a long-running block and returns its stdout once it has printed `linesWanted` lines.
    mutating func startBackground(_ block: String, linesWanted: Int) async throws -> String {
        let command = BackgroundCommand()
        try command.start(script: "exec " + rewritten(block), environment: environment)
        background.append(command)
        _ = try await eventually(120) { command.stdout.split(separator: "\n").count >= linesWanted }
        return command.stdout
    }

    func stopBackground() {
        for command in background.reversed() { command.stop() }
    }
}

/// A process of the tour that runs until the end: its stdout collected apart from its stderr (logs).
final class BackgroundCommand: @unchecked Sendable {
    private let process = SpawnedProcess()
    private let out = OutputCollector()
    private let all = OutputCollector()
    private var drains: [PipeDrain] = []

    func start(script: String, environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        process.environment = environment
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let (out, all) = (self.out, self.all)
        drains = [
            PipeDrain(stdout) { chunk in
                out.append(chunk)
                all.append(chunk)
            },
            PipeDrain(stderr) { chunk in all.append(chunk) },
        ]
    }

    var stdout: String { out.text }
    /// stdout and stderr, for a failure's message.
    var text: String { all.text }

    func stop() {
        guard process.isRunning else { return }
        process.interrupt()
        process.waitUntilExit()
    }
}

/// A page's output block against what a command printed: line by line, `…` for any text within a
/// line, a line of `…` alone for any number of lines (logs, a list's tail).
enum TourMatch {
    static func matches(_ expected: String, _ actual: String) -> Bool {
        let want = expected.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            .filter { !$0.isEmpty }
        let got = actual.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            .filter { !$0.isEmpty }
        return match(want[...], got[...])
    }

    private static func match(_ want: ArraySlice<String>, _ got: ArraySlice<String>) -> Bool {
        guard let first = want.first else { return got.isEmpty }
        if first.trimmingCharacters(in: .whitespaces) == "…" {
            return (0...got.count).contains { skip in match(want.dropFirst(), got.dropFirst(skip)) }
        }
        guard let line = got.first, lineMatches(first, line) else { return false }
        return match(want.dropFirst(), got.dropFirst())
    }

    /// The lines an output block requires (a line of `…` alone may be none).
    static func fixedLines(_ expected: String?) -> Int {
        guard let expected else { return 1 }
        return expected.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces) != "…" }.count
    }

    static func lineMatches(_ pattern: String, _ line: String) -> Bool {
        let pieces = pattern.components(separatedBy: "…")
        var rest = Substring(line)
        for (index, piece) in pieces.enumerated() {
            if index == 0 {
                guard rest.hasPrefix(piece) else { return false }
                rest = rest.dropFirst(piece.count)
            } else if index == pieces.count - 1 {
                return piece.isEmpty || rest.hasSuffix(piece)
            } else if let found = rest.range(of: piece) {
                rest = rest[found.upperBound...]
            } else {
                return false
            }
        }
        return rest.isEmpty
    }
}

/// A TCP port nothing listens on now (bound to port 0, then released).
enum FreePort {
    static func find() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
