import Foundation
import GRDB
import Logging
import Synchronization
import Testing

@testable import HeraldStore
@testable import HeraldStorePostgres
@testable import HeraldStoreSQLite

/// The backends the conformance suite runs on: SQLite always, PostgreSQL too when the run has a server
/// (`HERALD_TEST_POSTGRES_URL`). Every `HeraldStore` behaviour is one test taking a backend, so that
/// what docs/protocol.md requires cannot drift between them.
enum StoreBackend: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres

    static var available: [StoreBackend] { PostgresTestServer.isConfigured ? [.sqlite, .postgres] : [.sqlite] }

    var testDescription: String { rawValue }

    /// Runs `body` with a fresh database of this backend, then closes the stores opened on it and
    /// removes it, whether `body` threw or not.
    func withDatabase(_ body: (any StoreDatabase) async throws -> Void) async throws {
        switch self {
        case .sqlite: try await SQLiteTestDatabase.with { try await body($0) }
        case .postgres: try await TestDatabase.with { try await body($0) }
        }
    }

    /// Runs `body` with a store on a fresh database of this backend, as `withDatabase`.
    func withStore(_ body: (any TestStore) async throws -> Void) async throws {
        try await withDatabase { database in try await body(try await database.openStore()) }
    }
}

/// A store as the tests see it: the contract, and the outbox inspection only tests use.
typealias TestStore = HeraldStore & OutboxInspection

/// One test's database, whatever the backend: what a test needs beyond the `HeraldStore` protocol.
/// The two schemas share their table and column names, so the SQL here runs on both.
protocol StoreDatabase: Sendable {
    /// A store on this database: the first, one more beside it (another process or node), or the
    /// same one opened again after it was closed. Closed when the test ends.
    func openStore() async throws -> any TestStore

    /// Runs SQL on the database behind the stores' backs, as an operator would.
    func execute(_ sql: String) async throws

    /// The first column of each row of a query, as integers.
    func integers(_ sql: String) async throws -> [Int64]
}

/// A database file of its own in a temporary folder, removed afterwards with the stores opened on it
/// closed.
final class SQLiteTestDatabase: StoreDatabase {
    let folder: String
    let path: String
    private let stores = Mutex<[SQLiteHeraldStore]>([])

    private init() {
        folder = NSTemporaryDirectory() + "herald-store-\(UUID().uuidString)"
        path = folder + "/db/herald.sqlite"
    }

    /// Runs `body` with a new database, then removes it whether `body` threw or not.
    static func with(_ body: (SQLiteTestDatabase) async throws -> Void) async throws {
        let database = SQLiteTestDatabase()
        do {
            try await body(database)
        } catch {
            await database.remove()
            throw error
        }
        await database.remove()
    }

    /// A store on this file, opened by its path (`walRestartPages`: a checkpoint thread that restarts
    /// the log sooner and runs ten times as often).
    func open(walRestartPages: Int? = nil, logger: Logger = Logger(label: "herald.store")) throws -> SQLiteHeraldStore {
        let store =
            try walRestartPages.map {
                try SQLiteHeraldStore(path: path, logger: logger, checkpoints: 0.025, walRestartPages: $0)
            } ?? SQLiteHeraldStore(path: path, logger: logger)
        stores.withLock { $0.append(store) }
        return store
    }

    func openStore() async throws -> any TestStore { try open() }

    /// A plain connection to this file (its folder made if no store made it yet), for tests that work
    /// below the store: migrating part of the way, reading the schema.
    func queue() throws -> DatabaseQueue {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        return try DatabaseQueue(path: path)
    }

    func execute(_ sql: String) async throws {
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: sql) }
        try queue.close()
    }

    func integers(_ sql: String) async throws -> [Int64] {
        let queue = try DatabaseQueue(path: path)
        let values = try await queue.read { db in try Int64.fetchAll(db, sql: sql) }
        try queue.close()
        return values
    }

    private func remove() async {
        for store in stores.withLock({ $0 }) { try? await store.close() }
        try? FileManager.default.removeItem(atPath: folder)
    }
}

extension TestDatabase: StoreDatabase {
    func openStore() async throws -> any TestStore { try await open() }
}
