import Foundation
import HeraldTesting
import Testing

/// A database of its own on the PostgreSQL server the test run started (`HERALD_TEST_POSTGRES_URL`,
/// set by `make test`'s postgres stage), read and dropped with `psql`.
struct PostgresDatabase {
    /// The server's URL, nil when the run started none (then the PostgreSQL tests do not run, and
    /// `make test` has said so loudly: it only leaves the stage out with HERALD_SKIP_POSTGRES=1).
    static let serverURL: String? = {
        let url = ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES_URL"] ?? ""
        return url.isEmpty ? nil : url
    }()

    static var available: Bool { serverURL != nil }

    let url: String
    private let adminURL: String
    private let name: String

    init() throws {
        let server = try #require(Self.serverURL, "HERALD_TEST_POSTGRES_URL is not set")
        name = "herald_cli_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        adminURL = server
        // The server URL names database `herald`; this test's database replaces it.
        let parts = server.split(separator: "?", maxSplits: 1)
        let base = String(parts[0])
        let query = parts.count > 1 ? "?" + parts[1] : ""
        url = String(base[..<(base.lastIndex(of: "/") ?? base.endIndex)]) + "/" + name + query
        _ = try Self.psql(adminURL, "CREATE DATABASE \(name)")
    }

    /// One query's rows, `|`-separated columns.
    func query(_ sql: String) throws -> [String] {
        try Self.psql(url, sql).split(separator: "\n").map(String.init)
    }

    func drop() {
        _ = try? Self.psql(adminURL, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    static func psql(_ url: String, _ sql: String) throws -> String {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", url, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let problemDrain = PipeDrain(errors)
        let data = PipeDrain(output).waitForEnd()
        let problem = problemDrain.waitForEnd()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PsqlFailure(message: String(decoding: problem, as: UTF8.self))
        }
        return String(decoding: data, as: UTF8.self)
    }

    struct PsqlFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { "psql: \(message)" }
    }
}

/// The databases an end-to-end test runs on: SQLite always, PostgreSQL too when the run has a server.
enum TestBackend: String, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    static var available: [TestBackend] { PostgresDatabase.available ? [.sqlite, .postgres] : [.sqlite] }

    var testDescription: String { rawValue }

    /// A fresh database for one test: its `--database` value, and how to drop it afterwards.
    func make(_ label: String) throws -> (database: String, drop: @Sendable () -> Void) {
        switch self {
        case .sqlite:
            let folder = NSTemporaryDirectory() + "herald-\(label)-\(UUID().uuidString)"
            return (folder + "/herald.sqlite", { try? FileManager.default.removeItem(atPath: folder) })
        case .postgres:
            let database = try PostgresDatabase()
            return (database.url, { database.drop() })
        }
    }
}
