import Foundation
import HeraldCLISupport
import HeraldServer
import HeraldTesting

/// `herald serve` or `herald-dev fake-apns` run as a child for a benchmark: its output goes to a log file
/// that the bench reads, and its CPU and memory are read from procfs.
final class ChildProcess: Sendable {
    let process: SpawnedProcess
    let log: String

    private init(process: SpawnedProcess, log: String) {
        self.process = process
        self.log = log
    }

    static func start(_ executable: URL, _ arguments: [String], log: String) throws -> ChildProcess {
        guard FileManager.default.createFile(atPath: log, contents: nil), let handle = FileHandle(forWritingAtPath: log)
        else { throw CLIError(.unexpected, "cannot write \(log)") }
        let process = SpawnedProcess()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw CLIError(.unexpected, "cannot start \(Self.name(process)): \(error)") }
        return ChildProcess(process: process, log: log)
    }

    var isRunning: Bool { process.isRunning }

    func output() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// The rest of the first output line starting with `prefix`, waiting up to 30 s for it.
    func waitForLine(prefix: String) async throws -> String {
        for _ in 0..<300 {
            if let line = output().split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) {
                return String(line.dropFirst(prefix.count))
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CLIError(
            .unexpected,
            "\(Self.name(process)) did not print \"\(prefix)…\": \(output().suffix(2000))")
    }

    /// `herald serve`, `herald-dev fake-apns`: how errors name the child.
    private static func name(_ process: SpawnedProcess) -> String {
        "\(process.executableURL?.lastPathComponent ?? "?") \(process.arguments?.first ?? "")"
    }

    func sample() -> ProcessStats.Sample? { ProcessStats.current(pid: process.processIdentifier) }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
