import Foundation
import HeraldCore
import Testing

/// The SQLite file of `herald serve` (CLI.md, `--database`): one server per file, and private files.
@Suite struct DatabaseFileTests {
    static func temporaryFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "herald-dbfile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int, "\(path)") & 0o777
    }

    @Test func aSecondServeOnALockedFileExitsOneNamingTheLockWhileOtherCommandsStillWork() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/herald.sqlite"
        let first = try ServerProcess(databasePath: database)
        try await first.start()
        defer { first.kill(SIGKILL) }

        let second = try ServerProcess(databasePath: database)
        let started = Date()
        try second.launch()
        let status = try await second.waitForExit(timeout: 60)
        #expect(status == 1)
        #expect(Date().timeIntervalSince(started) < 60, "refused at once; the bound is loose for a loaded machine")
        let lines = second.log.split(separator: "\n").filter { !$0.isEmpty }
        #expect(lines.count == 1, "\(second.log)")
        let line = String(lines.first ?? "")
        #expect(line.contains(database + ".lock"), "\(line)")
        #expect(line.contains("pid \(first.process.processIdentifier)"), "\(line)")
        #expect(!second.log.contains("herald listening"))

        // Another spelling of the same file (a symbolic link) names the same lock.
        let link = folder + "/link.sqlite"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: database)
        let throughLink = try ServerProcess(databasePath: link)
        try throughLink.launch()
        #expect(try await throughLink.waitForExit(timeout: 10) == 1, "\(throughLink.log)")

        // The first server still serves, and the other commands still work on its file.
        let (health, _) = try await HTTP.get(first.baseURL + "/healthz")
        #expect(health == 200)
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let channel = try PrivateKey(hex: "0x" + String(repeating: "11", count: 32)).address.checksummed
        let added = try cli.run(["channel", "add", channel, "--name", "Desk", "--database", database])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try cli.run(["channel", "list", "--database", database]).stdout.contains(channel))

        // Once the holder is gone (even by SIGKILL), the file serves again.
        first.kill(SIGKILL)
        _ = try await first.waitForExit()
        let third = try ServerProcess(databasePath: database)
        try await third.start()
        third.kill(SIGKILL)
        _ = try await third.waitForExit()
    }

    @Test func theDatabaseFolderIsPrivateAndItsFilesTooWhateverTheUmask() async throws {
        let root = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/nested/data"
        let database = folder + "/herald.sqlite"
        let server = try ServerProcess(databasePath: database, umask: "000")
        try await server.start()
        defer { server.kill(SIGKILL) }
        // A write, so that the log holds something too.
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let channel = try PrivateKey(hex: "0x" + String(repeating: "22", count: 32)).address.checksummed
        #expect(try cli.run(["channel", "add", channel, "--name", "Desk", "--database", database]).status == 0)

        #expect(try Self.mode(root + "/nested") == 0o700)
        #expect(try Self.mode(folder) == 0o700)
        for suffix in ["", "-wal", "-shm", ".lock"] {
            #expect(try Self.mode(database + suffix) == 0o600, "herald.sqlite\(suffix)")
        }
    }
}
