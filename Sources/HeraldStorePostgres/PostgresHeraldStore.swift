public import HeraldCore
public import HeraldStore
public import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The store on PostgreSQL, for several Herald nodes on one database. The database judges what one
/// node's memory cannot: a replay is a conflict on the nonce's key, the binding limit is counted under
/// the wallet's advisory lock, and outbox pushes are claimed with `FOR UPDATE SKIP LOCKED`.
///
/// Over postgres-nio's `PostgresClient` pool, whose `run()` this store's own task runs from `open` to
/// `close`. Writes that change what clients see go through a group-commit writer (`PostgresWriter`).
public final class PostgresHeraldStore: HeraldStore {
    /// Where the store is connected (its `description` hides the password).
    public let url: PostgresURL
    let client: PostgresClient
    let logger: Logger
    private let runTask: Task<Void, Never>
    let writer: PostgresWriter
    private let closed = Atomic<Bool>(false)
    /// How long a call may wait for the database before it is answered `unavailable` (the connect
    /// timeout: while the server is down, postgres-nio would queue it for a minute).
    let answerTimeout: Duration
    /// Answers callers `unavailable` once `answerTimeout` passed (the writer's, and `perform`'s), one
    /// timer for them all.
    private let answers: DeadlineWatch

    private init(
        url: PostgresURL, client: PostgresClient, runTask: Task<Void, Never>, lanes: Int, answerTimeout: Duration,
        logger: Logger
    ) {
        self.url = url
        self.answerTimeout = answerTimeout
        answers = DeadlineWatch(tick: DeadlineWatch.tick(for: answerTimeout))
        self.client = client
        self.runTask = runTask
        self.logger = logger
        writer = PostgresWriter(
            client: client, lanes: lanes, knownKeys: KnownWalletKeys(), batchTimeout: answerTimeout, logger: logger)
    }

    /// The writer's lanes of a node: see `open`.
    static let maximumLanes = 2

    /// Connects to `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…]`), waits until
    /// the server answers (at most `connectTimeout`), brings the schema up to date (once, under an
    /// advisory lock, however many nodes start together) and returns a store whose pool holds at most
    /// `poolSize` connections. A failure is a `StoreError` naming the URL without its password.
    public static func open(
        url: String, poolSize: Int = 16, connectTimeout: Duration = .seconds(10), logger: Logger
    ) async throws -> PostgresHeraldStore {
        try await open(url: url, poolSize: poolSize, connectTimeout: connectTimeout, answerTimeout: nil, logger: logger)
    }

    /// The same, with calls answered `unavailable` after `answerTimeout` (default: `connectTimeout`) rather
    /// than the connect timeout: for tests that need a short bound on a busy machine.
    static func open(
        url: String, poolSize: Int, connectTimeout: Duration, answerTimeout: Duration?, logger: Logger
    ) async throws -> PostgresHeraldStore {
        let parsed: PostgresURL
        do { parsed = try PostgresURL(url) } catch { throw StoreError(error.description) }
        guard poolSize >= 2 else {
            throw StoreError("the PostgreSQL pool needs at least 2 connections, not \(poolSize)")
        }
        let tls = try PostgresTLS(parsed.sslMode)
        let deadline = ContinuousClock.now + connectTimeout
        try await PostgresProbe.waitForServer(parsed, tls: tls, until: deadline, logger: logger)

        var configuration = PostgresClient.Configuration(
            host: parsed.host, port: parsed.port, username: parsed.user, password: parsed.password,
            database: parsed.database, tls: tls.client)
        configuration.options.maximumConnections = poolSize
        configuration.options.connectTimeout = connectTimeout
        // Herald's statements are short, planned in well under a millisecond; a server whose JIT is on
        // (PostgreSQL's default) compiled a broadcast's statement for 0.34 s of its 3.1 s at 100,000
        // subscribers. Nothing Herald runs is long enough to earn it back.
        configuration.options.additionalStartupParameters = [("jit", "off")]
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        // The pool leases connections only once run() is under way (before that a query waits, and the
        // pool logs a warning). Waiting for the run task to begin, which calls run() at once without
        // suspending, leaves no practical window for the first query to come first.
        let (begun, beginning) = AsyncStream<Void>.makeStream()
        let runTask = Task {
            beginning.finish()
            await client.run()
        }
        for await _ in begun {}
        do {
            try await PostgresProbe.answer(client, url: parsed, until: deadline)
            try await PostgresMigrator.migrate(client, url: parsed, logger: logger)
            try await PostgresProbe.checkDurability(client, url: parsed)
        } catch {
            runTask.cancel()
            await runTask.value
            throw error
        }
        // Two lanes at most (each holds one connection while it commits; the rest of the pool serves
        // reads, claims and outcomes): fewer lanes gather more registrations a transaction. With four,
        // PostgreSQL spent 0.21 ms of CPU a registration and the node made 2,758-2,936/s; with two,
        // 0.11-0.13 ms at 3,334-4,245/s (alternated on 2 cores, 2026-11-29). Ten nodes still keep twenty
        // transactions open at once, and a lane's batches grow with its load.
        let lanes = max(1, min(Self.maximumLanes, poolSize / 4))
        return PostgresHeraldStore(
            url: parsed, client: client, runTask: runTask, lanes: lanes, answerTimeout: answerTimeout ?? connectTimeout,
            logger: logger)
    }

    // MARK: Writes through the group-commit writer

    public func apply(_ change: DeviceChange) async throws -> DeviceChangeOutcome {
        guard case .device(let outcome) = try await write(.device(change)) else {
            throw StoreError("the writer answered a device change with another kind of outcome")
        }
        return outcome
    }

    public func apply(_ change: SubscriptionChange) async throws -> SubscriptionChangeOutcome {
        guard case .subscription(let outcome) = try await write(.subscription(change)) else {
            throw StoreError("the writer answered a subscription with another kind of outcome")
        }
        return outcome
    }

    public func submit(_ notification: NotificationSubmission) async throws -> NotificationOutcome {
        guard case .notification(let outcome) = try await write(.notification(notification)) else {
            throw StoreError("the writer answered a notification with another kind of outcome")
        }
        return outcome
    }

    func control<Outcome: Sendable>(
        _ write: SubscriberControlWrite, _ outcome: @Sendable (SubscriberControlOutcome) -> Outcome?
    ) async throws -> Outcome {
        guard case .control(let answer) = try await self.write(.control(write)), let value = outcome(answer)
        else { throw StoreError("the writer answered a §10 operation with another kind of outcome") }
        return value
    }

    private func write(_ write: PostgresWrite) async throws -> PostgresWriteOutcome {
        guard !closed.load(ordering: .acquiring) else { throw StoreError.storeClosed }
        let within = write.isBroadcast ? max(answerTimeout, PostgresWriter.broadcastTimeout) : answerTimeout
        // Queued, a write cannot be taken back: one answered late may still be stored, as the answer says.
        return try await answers.answer(within: within, late: late(within: within)) { answer in
            writer.submit(write, answer: answer)
            return nil
        }
    }

    // MARK: Bindings, keys, health

    public func publicKey(of wallet: EthereumAddress) async throws -> PublicKey? {
        let statement = PublicKeyStatement(wallet: wallet)
        let stored = try await perform { [self] in try await client.execute(statement, logger: logger).collected().first
        }
        guard let stored else { return nil }
        do { return try PublicKey(bytes: stored) } catch { throw StoreError(.corrupt, "stored public key is damaged") }
    }

    /// A key is written once per wallet: a wallet whose key is known (cached) costs no write at all, and
    /// a new one joins the group-commit writer's next transaction rather than committing on its own.
    public func rememberPublicKey(_ key: PublicKey, of wallet: EthereumAddress, now: Int64) async throws {
        if writer.knownKeys.contains(wallet) { return }
        guard case .publicKeyRemembered = try await write(.publicKey(key, of: wallet, now: now)) else {
            throw StoreError("the writer answered a public key with another kind of outcome")
        }
    }

    public func bindings(of wallet: EthereumAddress) async throws -> [DeviceBindingRecord] {
        try await perform { [self] in
            try await client.query(
                """
                SELECT platform, device_token, created_at, last_seen FROM bindings
                WHERE wallet = \(bytea(wallet)) ORDER BY created_at, platform, device_token
                """, logger: logger
            ).rows { row in
                DeviceBindingRecord(
                    wallet: wallet, platform: try row.platform(0), deviceToken: try row.text(1),
                    createdAt: try row.int(2), lastSeen: try row.int(3))
            }
        }
    }

    public func webPushSubscription(
        of wallet: EthereumAddress, endpoint: String
    ) async throws
        -> WebPushSubscription?
    {
        try await perform { [self] in
            try await client.query(
                """
                SELECT p256dh, auth FROM bindings
                WHERE wallet = \(bytea(wallet)) AND platform = 'webpush' AND device_token = \(endpoint)
                  AND p256dh IS NOT NULL AND auth IS NOT NULL
                """, logger: logger
            ).rows { row in
                WebPushSubscription(storedEndpoint: endpoint, p256dh: try row.text(0), auth: try row.text(1))
            }.first
        }
    }

    public func bindingCount() async throws -> Int {
        try await count("SELECT count(*) FROM bindings")
    }

    public var writerStatistics: WriterStatistics.Snapshot { writer.statistics.snapshot() }

    public func checkHealth() async throws {
        _ = try await count("SELECT 1")
    }

    /// Finishes the writes submitted, then closes the pool. Further calls fail.
    public func close() async throws {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        await writer.close()
        runTask.cancel()
        await runTask.value
    }

    /// Open while the server runs; closed at its graceful shutdown, after in-flight requests drained.
    /// The pool's own `run()` is this store's child task from `open` to `close` rather than a service
    /// of the group: `open` migrates before it returns (the HTTP server must not bind before the schema is
    /// current), and the CLI's one-shot commands (`herald channel add`) use a store without any group.
    /// Meanwhile it keeps the young tables' statistics current (`PostgresPlanFreshness`).
    public func run() async throws {
        let freshness = Task { [client, logger] in await PostgresPlanFreshness(client: client, logger: logger).run() }
        try? await gracefulShutdown()
        freshness.cancel()
        await freshness.value
        do {
            try await close()
            logger.info("storage closed")
        } catch {
            logger.error("closing storage failed: \(error)")
        }
    }

    /// Nothing to void: several live nodes share the outbox, and a claim another node holds is its own
    /// until its lease passes.
    public func prepareToServe() async throws -> Int { 0 }

    // MARK: Helpers

    func count(_ query: PostgresQuery) async throws -> Int {
        Int(try await perform { [self] in try await client.query(query, logger: logger).integer() })
    }

    /// Runs one piece of database work outside the writer, answered within `answerTimeout`: again, after
    /// a deadlock or serialization failure (it had no effect); any other failure becomes a `StoreError`
    /// that names no user data, with the code PostgreSQL's answer says.
    @discardableResult
    func perform<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        guard !closed.load(ordering: .acquiring) else { throw StoreError.storeClosed }
        // The work runs in a task of its own: a lease postgres-nio never hands out must not hold the caller.
        // Cancelled when late, the work leaves postgres-nio's queue of leases.
        return try await answers.answer(within: answerTimeout, late: late) { [url] answer in
            let task = Task { answer.resume(with: await Self.retryingTransient(work, url: url)) }
            return { task.cancel() }
        }
    }

    private static func retryingTransient<T: Sendable>(
        _ work: @Sendable () async throws -> T, url: PostgresURL
    ) async -> Result<T, any Error> {
        var runs = 0
        while true {
            runs += 1
            do {
                return .success(try await work())
            } catch let error as StoreError {
                return .failure(error)
            } catch  where PostgresErrors.isTransient(error) && runs <= PostgresWriter.transientRetries {
                continue
            } catch {
                return .failure(PostgresErrors.storeError("PostgreSQL at \(url): ", error))
            }
        }
    }

    /// The answer to a call that PostgreSQL did not answer in time.
    private var late: @Sendable () -> StoreError { late(within: answerTimeout) }

    private func late(within limit: Duration) -> @Sendable () -> StoreError {
        { [url] in StoreError(.unavailable, "PostgreSQL at \(url) did not answer within \(limit.components.seconds) s")
        }
    }
}
