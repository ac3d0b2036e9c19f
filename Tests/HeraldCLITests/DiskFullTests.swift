import Foundation
import GRDB
import HeraldCore
import HeraldTesting
import Testing

/// docs/protocol.md §3 on a full disk (SQLite): a write that was not stored is never answered 2xx; the
/// server stays up and, once space is back, writes succeed again without a restart, and everything
/// acknowledged before is still there. The disk is "full" through the server's file-size limit
/// (`prlimit --fsize` on the running process): every write past the limit fails with EFBIG, as a full
/// disk fails it with ENOSPC, and both reach Herald as a failed SQLite write.
@Suite(.serialized) struct DiskFullTests {
    @Test func writesOnAFullDiskAreRefusedAndResumeWhenSpaceIsBack() async throws {
        let folder = NSTemporaryDirectory() + "herald-diskfull-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let database = folder + "/herald.sqlite"
        let server = try ServerProcess(databasePath: database)
        let cli = try CLIRunner()
        defer {
            server.kill(SIGKILL)
            cli.cleanUp()
            try? FileManager.default.removeItem(atPath: folder)
        }
        try await server.start()
        #expect(try cli.run(["wallet", "create", "--light"]).status == 0)
        func register(_ index: Int) throws -> CLIRunner.Output {
            try cli.run([
                "register", "--server", server.baseURL, "--platform", "ios", "--device-token",
                String(format: "%064x", index),
            ])
        }
        var acknowledged: Set<String> = []
        for index in 0..<5 {
            let output = try register(index)
            #expect(output.status == 0, "\(output.stderr)")
            if output.status == 0 { acknowledged.insert(String(format: "%064x", index)) }
        }

        // No file of the server's may grow by a byte: every write of SQLite's fails.
        try Self.limitFileSize(of: server, to: "1")
        var refused = 0
        for index in 5..<15 {
            let output = try register(index)
            if output.status == 0 {
                acknowledged.insert(String(format: "%064x", index))
            } else {
                refused += 1
                // Exit 4 is the CLI's "5xx": the server answered 503 unavailable (or 500), never 2xx.
                #expect(output.status == 4 && output.stderr.contains("HTTP 5"), "\(output.stderr)")
            }
        }
        #expect(refused == 10, "a write that cannot be stored is never acknowledged")
        #expect(server.process.isRunning)
        let (health, _) = try await HTTP.get(server.baseURL + "/healthz")
        #expect(health == 200, "reads still answer, so the node stays in service")

        // Space is back: writes succeed without a restart.
        try Self.limitFileSize(of: server, to: "unlimited")
        #expect(
            try await eventually(20) {
                let output = try register(100)
                if output.status == 0 { acknowledged.insert(String(format: "%064x", 100)) }
                return output.status == 0
            })
        let output = try register(101)
        #expect(output.status == 0, "\(output.stderr)")
        if output.status == 0 { acknowledged.insert(String(format: "%064x", 101)) }
        #expect(server.process.isRunning)

        // Everything acknowledged is in the database, after a crash too.
        server.kill(SIGKILL)
        _ = try await server.waitForExit()
        let queue = try DatabaseQueue(path: database)
        defer { try? queue.close() }
        let stored = try await queue.read { try String.fetchSet($0, sql: "SELECT device_token FROM bindings") }
        #expect(acknowledged.isSubset(of: stored), "\(acknowledged.subtracting(stored))")
        #expect(acknowledged.count == 7)
    }

    /// Sets the running server's soft file-size limit (its hard limit stays, so it can be raised again).
    static func limitFileSize(of server: ServerProcess, to bytes: String) throws {
        let prlimit = SpawnedProcess()
        prlimit.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        prlimit.arguments = ["--pid", String(server.process.processIdentifier), "--fsize=\(bytes):"]
        try prlimit.run()
        prlimit.waitUntilExit()
        #expect(prlimit.terminationStatus == 0)
    }
}
