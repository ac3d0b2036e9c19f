import Foundation
import HeraldCore
import Testing

/// The SQLite file of `herald serve` (CLI.md, `--database`): private files.
@Suite struct DatabaseFileTests {
    static func temporaryFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "herald-dbfile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int, "\(path)") & 0o777
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
        for suffix in ["", "-wal", "-shm"] {
            #expect(try Self.mode(database + suffix) == 0o600, "herald.sqlite\(suffix)")
        }
    }
}
