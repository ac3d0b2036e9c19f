import Foundation
import HeraldTesting
import Testing

/// Runs the built `herald` binary (or `herald-dev`, for the benchmarks and fakes) as a user would: its
/// own process, environment, stdin, exit code.
struct CLIRunner {
    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    let home: URL
    var environment: [String: String]

    init(passphrase: String? = "correct horse ✓", executable: String = "herald") throws {
        self.executable = executable
        home = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_HOME"] = home.path
        environment.removeValue(forKey: "HERALD_WALLET")
        environment.removeValue(forKey: "HERALD_PASSPHRASE")
        if let passphrase { environment["HERALD_PASSPHRASE"] = passphrase }
        self.environment = environment
    }

    /// `herald`, or `herald-dev` for the benchmarks and the fakes.
    let executable: String

    /// The `herald` (or `herald-dev`) executable next to the test bundle (SwiftPM puts them in the same
    /// bin folder).
    static func binary(_ name: String = "herald") throws -> URL {
        let candidates = [
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            Bundle.main.bundleURL,
        ].map { $0.appendingPathComponent(name) }
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "the \(name) binary was not built next to the tests; run `swift build` first")
    }

    @discardableResult
    func run(_ arguments: [String], stdin: String? = nil) throws -> Output {
        let process = SpawnedProcess()
        // A new session has no controlling terminal, so a prompt cannot reach the developer's
        // terminal and hang the test: the CLI sees what a script or CI sees.
        let setsid = URL(fileURLWithPath: "/usr/bin/setsid")
        if FileManager.default.isExecutableFile(atPath: setsid.path) {
            process.executableURL = setsid
            process.arguments = ["--wait", try Self.binary(executable).path] + arguments
        } else {
            process.executableURL = try Self.binary(executable)
            process.arguments = arguments
        }
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        let stdoutDrain = PipeDrain(out)
        let stderrDrain = PipeDrain(err)
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let stdoutData = stdoutDrain.waitForEnd()
        let stderrData = stderrDrain.waitForEnd()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: stderrData, as: UTF8.self))
    }

    func cleanUp() { try? FileManager.default.removeItem(at: home) }
}
