import Foundation
import HeraldCore
import HeraldStore
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import HeraldStorePostgres

/// The server these tests run against: `HERALD_TEST_POSTGRES_URL`, a role that may create databases
/// (`scripts/postgres/cluster.sh start DIR` prints one). Unset, the PostgreSQL suites are skipped and
/// `PostgresTestServerTests` says so.
enum PostgresTestServer {
    static let variable = "HERALD_TEST_POSTGRES_URL"

    static let url: String? = {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else { return nil }
        return value
    }()

    static var isConfigured: Bool { url != nil }

    /// Quiet: the stores' notices (migrations) would bury the test output.
    static let logger: Logger = {
        var logger = Logger(label: "herald.store.postgres.tests")
        logger.logLevel = .warning
        return logger
    }()
}

/// A database of its own for one test (`herald_test_<random>`), so that tests run in parallel; dropped
/// afterwards with the stores opened on it closed.
final class TestDatabase: Sendable {
    let name: String
    let url: PostgresURL
    private let stores = Mutex<[PostgresHeraldStore]>([])

    private init(name: String, url: PostgresURL) {
        self.name = name
        self.url = url
    }

    /// Runs `body` with a new database, then drops it whether `body` threw or not.
    static func with(_ body: (TestDatabase) async throws -> Void) async throws {
        let database = try await create()
        do {
            try await body(database)
        } catch {
            await database.drop()
            throw error
        }
        await database.drop()
    }

    private static func create() async throws -> TestDatabase {
        let server = try PostgresURL(try #require(PostgresTestServer.url))
        let name = "herald_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await execute("CREATE DATABASE \(name)", on: server)
        let url = PostgresURL(
            user: server.user, password: server.password, host: server.host, port: server.port, database: name,
            sslMode: server.sslMode)
        return TestDatabase(name: name, url: url)
    }

    /// A store on this database: one more node.
    func open(poolSize: Int = 8, answerTimeout: Duration? = nil) async throws -> PostgresHeraldStore {
        // The connect timeout also bounds every call (answered `unavailable` past it): a minute, since
        // make test's parallel suites were seen to keep a debug build's batch waiting past 10 s.
        let store = try await PostgresHeraldStore.open(
            url: url.unredacted, poolSize: poolSize, connectTimeout: .seconds(60), answerTimeout: answerTimeout,
            logger: PostgresTestServer.logger)
        stores.withLock { $0.append(store) }
        return store
    }

    /// Runs SQL on this database, as an operator would with psql.
    func execute(_ sql: String) async throws {
        try await Self.execute(sql, on: url)
    }

    /// A connection of its own to this database for `body` (a transaction held open beside a store).
    func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await Self.withConnection(to: url, body)
    }

    /// The first column of each row of a query on this database, as integers.
    func integers(_ sql: String) async throws -> [Int64] {
        try await Self.withConnection(to: url) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: PostgresTestServer.logger)
                .rows { try $0.int(0) }
        }
    }

    /// The plan PostgreSQL keeps for `sql` as a named prepared statement once it stops planning it for each
    /// execution's parameters (`plan_cache_mode = force_generic_plan` gets there at once), one line a node.
    func genericPlan(of sql: String) async throws -> [String] {
        let parameters = (1...64).last { sql.contains("$\($0)") } ?? 0
        let arguments =
            parameters == 0 ? "" : "(" + Array(repeating: "NULL", count: parameters).joined(separator: ", ") + ")"
        return try await Self.withConnection(to: url) { connection in
            for statement in ["SET plan_cache_mode = force_generic_plan", "PREPARE planned AS \(sql)"] {
                _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresTestServer.logger)
                    .rows { _ in () }
            }
            return try await connection.query(
                PostgresQuery(unsafeSQL: "EXPLAIN EXECUTE planned\(arguments)"), logger: PostgresTestServer.logger
            ).rows { try $0.text(0) }
        }
    }

    private func drop() async {
        for store in stores.withLock({ $0 }) { try? await store.close() }
        guard let server = try? PostgresURL(PostgresTestServer.url ?? "") else { return }
        try? await Self.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", on: server)
    }

    private static func execute(_ sql: String, on url: PostgresURL) async throws {
        try await withConnection(to: url) { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: PostgresTestServer.logger)
                .rows { _ in () }
        }
    }

    private static func withConnection<T: Sendable>(
        to url: PostgresURL, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: try PostgresTLS(url.sslMode).connection)
        let connection = try await PostgresConnection.connect(
            configuration: configuration, id: 1, logger: PostgresTestServer.logger)
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
