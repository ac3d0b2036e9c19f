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
    func open(poolSize: Int = 8) async throws -> PostgresHeraldStore {
        let store = try await PostgresHeraldStore.open(
            url: url.unredacted, poolSize: poolSize, logger: PostgresTestServer.logger)
        stores.withLock { $0.append(store) }
        return store
    }

    /// Runs SQL on this database, as an operator would with psql.
    func execute(_ sql: String) async throws {
        try await Self.execute(sql, on: url)
    }

    /// The first column of each row of a query on this database, as integers.
    func integers(_ sql: String) async throws -> [Int64] {
        try await Self.withConnection(to: url) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: PostgresTestServer.logger)
                .rows { try $0.int(0) }
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

enum Fixtures {
    static let key = try! PrivateKey(hex: "0x107be946709e41b7895eea9f2dacf998a0a9124acbb786f0fd1a826101581a07")
    static let other = try! PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")

    static func change(
        _ action: DeviceChange.Action = .register, key: PrivateKey = key,
        token: String = String(repeating: "ab", count: 32), platform: Platform = .ios, nonce: UInt64,
        now: Int64 = 1_000, retainedUntil: Int64 = 2_000, max: Int = 20, confirm: Bool = false
    ) -> DeviceChange {
        DeviceChange(
            action: action, wallet: key.address, platform: platform, deviceToken: token, publicKey: key.publicKey,
            nonce: UInt256(nonce), nonceRetainedUntil: retainedUntil, now: now, maxBindingsPerWallet: max,
            queueSetupConfirmation: confirm)
    }

    static func token(_ index: Int) -> String { String(format: "%064x", index) }

    /// A wallet per index, for subscribers.
    static func subscriber(_ index: Int) -> PrivateKey {
        try! PrivateKey(bytes: Array(repeating: 0, count: 30) + [UInt8((index + 1) >> 8), UInt8((index + 1) & 0xff)])
    }

    static func subscription(
        _ action: SubscriptionChange.Action = .subscribe, channel: EthereumAddress = other.address,
        key: PrivateKey, nonce: UInt64, now: Int64 = 900
    ) -> SubscriptionChange {
        SubscriptionChange(
            action: action, channel: channel, subscriber: key.address, publicKey: key.publicKey,
            nonce: UInt256(nonce), nonceRetainedUntil: 10_000, now: now)
    }

    /// A notification from `other`, the channel of these tests.
    static func submission(_ payload: String, nonce: UInt64, epoch: Int64 = 5_000) throws -> NotificationSubmission {
        NotificationSubmission(
            channel: other.address, publicKey: other.publicKey, payload: try NotificationPayload.parse(payload),
            nonce: UInt256(nonce), nonceRetainedUntil: 4_000_000_000, now: 1_000, epoch: epoch)
    }

    /// The channel `other` ("Desk") with `count` subscribers, each with one iOS binding.
    static func seed(_ store: PostgresHeraldStore, subscribers count: Int) async throws {
        try await store.saveChannel(
            ChannelRecord(address: other.address, name: "Desk", icon: "i", url: "u", createdAt: 1))
        for index in 0..<count {
            let key = subscriber(index)
            _ = try await store.apply(subscription(key: key, nonce: 1))
            _ = try await store.apply(change(key: key, token: token(index), nonce: 2))
        }
    }
}
