import Foundation
import GRDB
public import HeraldCore
public import HeraldStore
public import Logging
import ServiceLifecycle
import Synchronization

/// The embedded default store: SQLite in WAL mode through GRDB, `synchronous = FULL` so that a
/// committed transaction is on disk before its waiters are answered, and group commit so that
/// concurrent requests share one transaction (and one fsync) instead of queueing for one each.
public final class SQLiteHeraldStore: HeraldStore {
    public let path: String
    let pool: DatabasePool
    let writer: GroupCommitWriter
    let checkpointer: WALCheckpointer
    private let logger: Logger
    /// Held while `herald serve` uses the file; nil for the other commands, which may share it.
    private let serveLock: Mutex<SQLiteServeLock?>
    /// Set by `close()`: later calls get `StoreError.storeClosed`, not GRDB's own error.
    let closed = Atomic<Bool>(false)

    /// Opens (creating if needed) the database at `path` and runs pending migrations. With `serving`,
    /// it first takes the file's serve lock (`SQLiteServeLock`), held until `close()`: a second server on
    /// the file would void this one's outbox claims and send their pushes again.
    public convenience init(path: String, serving: Bool = false, logger: Logger = Logger(label: "herald.store")) throws
    {
        let lock = serving ? try SQLiteServeLock(databasePath: path) : nil
        try self.init(
            path: path, logger: logger, checkpoints: WALCheckpointer.interval,
            walRestartPages: WALCheckpointer.restartPages, serveLock: lock)
    }

    /// As above, with the checkpoint thread's rhythm set (tests: rounds and restarts that come sooner).
    init(
        path: String, logger: Logger, checkpoints interval: TimeInterval, walRestartPages: Int,
        serveLock: SQLiteServeLock? = nil
    ) throws {
        self.path = path
        self.logger = logger
        self.serveLock = Mutex(serveLock)
        // Private whatever the umask: the folder 0700, the file 0600 before SQLite opens it (its -wal
        // and -shm take the file's mode).
        do {
            try PrivateFiles.createFolder(PrivateFiles.parentFolder(of: path))
            try PrivateFiles.createFile(path)
        } catch {
            throw StoreError("cannot create the database at \(path): \(error)")
        }
        var configuration = Configuration()
        configuration.label = "herald"
        configuration.busyMode = .timeout(10)
        // Reads are point lookups; two readers (one per core) keep page caches, and memory, small.
        configuration.maximumReaderCount = 2
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            // FULL: the WAL is fsynced at every commit, so an acknowledged write survives power loss too.
            // Set here, not in prepareDatabase: the pool turns WAL on after that, and with it
            // synchronous = NORMAL on the writer's connection (the one that commits).
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                // 8 MiB of page cache for the one connection that writes (SQLite's default is 2 MiB: a
                // broadcast to a million subscribers read the pages it revisits again from the file). Not
                // more: a commit after a b-tree split walks the whole cache. The split renumbers pages
                // through the number past 1 GiB (SQLite's pending-byte page), and the commit's truncation
                // to the file's size then visits every hash slot and cached page; with 64 MiB that was
                // 7% of a node's CPU delivering pushes (docs/benchmarks.md, "The writer's page cache").
                try db.execute(sql: "PRAGMA cache_size = -8192")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(WALCheckpointer.writerBackstopPages)")
            }
            try Self.migrate(pool, logger: logger)
        } catch {
            throw StoreError.sqlite(error, "cannot open the database at \(path): ")
        }
        let ledger = NonceLedger()
        do {
            // The replay check's memory: every nonce whose operation could still be presented.
            let now = Int64(Date().timeIntervalSince1970)
            // A cursor, not fetchAll: a million rows as Row objects would cost hundreds of megabytes.
            let live = try pool.read { db in
                var entries: [(NonceDigest, Int64)] = []
                let rows = try Row.fetchCursor(
                    db, sql: "SELECT digest, retained_until FROM nonces WHERE retained_until >= ?", arguments: [now])
                while let row = try rows.next() {
                    let bytes: Data = row["digest"]
                    if let digest = NonceDigest(bytes: Array(bytes)) { entries.append((digest, row["retained_until"])) }
                }
                return entries
            }
            ledger.insert(live)
            MemoryRelease.returnFreedMemoryToSystem()
        } catch {
            throw StoreError.sqlite(error, "cannot load spent nonces from \(path): ")
        }
        let writer = GroupCommitWriter(pool: pool, ledger: ledger, logger: logger)
        self.writer = writer
        do {
            checkpointer = try WALCheckpointer(
                path: path, interval: interval, restartPages: walRestartPages,
                requestRestart: { writer.requestLogRestart() })
        } catch {
            throw StoreError.sqlite(error, "cannot open the checkpoint connection to \(path): ")
        }
    }

    /// Brings the schema up to date. An upgrade is announced before it starts: some migrations copy
    /// whole tables (0008, 0009: about 8 s for a million bindings and outbox rows), and a server that
    /// says nothing meanwhile looks hung. A new database is created silently.
    private static func migrate(_ pool: DatabasePool, logger: Logger) throws {
        let applied = try pool.read { db in try Migrations.migrator.appliedIdentifiers(db) }
        let pending = Migrations.all.map(\.identifier).filter { !applied.contains($0) }
        guard !applied.isEmpty, !pending.isEmpty else {
            try Migrations.migrator.migrate(pool)
            return
        }
        logger.notice(
            "migrating the database schema (a large database may take a while)",
            metadata: ["migrations": "\(pending.joined(separator: ", "))"])
        let started = ContinuousClock.now
        try Migrations.migrator.migrate(pool)
        logger.notice(
            "database schema migrated",
            metadata: ["to": "\(pending.last ?? "")", "duration": "\(ContinuousClock.now - started)"])
    }

    public func apply(_ change: DeviceChange) async throws -> DeviceChangeOutcome {
        guard case .device(let outcome) = try await writer.submit(.device(change)) else {
            throw StoreError("the writer answered a device change with another kind of outcome")
        }
        return outcome
    }

    public func apply(_ change: SubscriptionChange) async throws -> SubscriptionChangeOutcome {
        guard case .subscription(let outcome) = try await writer.submit(.subscription(change)) else {
            throw StoreError("the writer answered a subscription with another kind of outcome")
        }
        return outcome
    }

    public func publicKey(of wallet: EthereumAddress) async throws -> PublicKey? {
        guard let data = try await readPublicKey(wallet) else { return nil }
        do { return try PublicKey(bytes: Array(data)) } catch {
            throw StoreError(.corrupt, "stored public key is damaged")
        }
    }

    /// Through the reader pool, awaited: never a synchronous read on the caller's thread, which under
    /// `herald serve` is an event loop, and which a busy database could hold for its 10 s busy timeout.
    private func readPublicKey(_ wallet: EthereumAddress) async throws -> Data? {
        try await read { db in
            let statement = try db.cachedStatement(sql: "SELECT public_key FROM wallet_keys WHERE wallet = ?")
            return try Data.fetchOne(statement, arguments: [Data(wallet.bytes)])
        }
    }

    public func bindings(of wallet: EthereumAddress) async throws -> [DeviceBindingRecord] {
        // Rows are mapped inside the read: they are not Sendable, the records are.
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT platform, device_token, created_at, last_seen FROM bindings
                    WHERE wallet = ? ORDER BY created_at, platform, device_token
                    """,
                arguments: [Data(wallet.bytes)])
            return try rows.map { row in
                guard let platform = Platform(rawValue: row["platform"]) else {
                    throw StoreError(.corrupt, "unknown platform in store")
                }
                return DeviceBindingRecord(
                    wallet: wallet, platform: platform, deviceToken: row["device_token"], createdAt: row["created_at"],
                    lastSeen: row["last_seen"])
            }
        }
    }

    public func webPushSubscription(
        of wallet: EthereumAddress, endpoint: String
    ) async throws
        -> WebPushSubscription?
    {
        // Read on every Web Push send: a cached statement, not one compiled (and authorised) per call.
        try await read { db in
            let statement = try db.cachedStatement(
                sql: """
                    SELECT p256dh, auth FROM bindings
                    WHERE wallet = ? AND platform = 'webpush' AND device_token = ?
                      AND p256dh IS NOT NULL AND auth IS NOT NULL
                    """)
            return try Row.fetchOne(statement, arguments: [Data(wallet.bytes), endpoint]).map { row in
                WebPushSubscription(storedEndpoint: endpoint, p256dh: row["p256dh"], auth: row["auth"])
            }
        }
    }

    public func bindingCount() async throws -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM bindings") ?? 0 }
    }

    public func pruneNonces(expiredBefore cutoff: Int64) async throws -> Int {
        writer.ledger.prune(expiredBefore: cutoff)
        return try await deleteInChunks(
            "DELETE FROM nonces WHERE rowid IN (SELECT rowid FROM nonces WHERE retained_until < ? LIMIT 5000)", cutoff)
    }

    /// A full scan (no index on last_seen, which would cost every registration a random index
    /// write); it runs rarely and in short chunks.
    public func pruneBindings(lastSeenBefore cutoff: Int64) async throws -> Int {
        try await deleteInChunks(
            """
            DELETE FROM bindings WHERE (wallet, platform, device_token) IN
              (SELECT wallet, platform, device_token FROM bindings WHERE last_seen < ? LIMIT 5000)
            """, cutoff)
    }

    /// Deletes in short transactions so that pruning never holds the write lock for long.
    func deleteInChunks(_ sql: String, _ cutoff: Int64) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await write { db in
                try db.execute(sql: sql, arguments: [cutoff])
                return db.changesCount
            }
            total += deleted
            if deleted < 5000 { return total }
        }
    }

    /// Every feed read remembers its signer's key, so the common case must not write: a wallet whose key
    /// is known (cached, or found by a point read) costs no transaction and no fsync. A new one joins the
    /// group-commit writer's next transaction, never a transaction (and fsync) of its own.
    public func rememberPublicKey(_ key: PublicKey, of wallet: EthereumAddress, now: Int64) async throws {
        if writer.knownKeys.contains(wallet) { return }
        if try await readPublicKey(wallet) != nil {
            writer.knownKeys.insert([wallet])
            return
        }
        try refuseIfClosed()
        guard case .publicKeyRemembered = try await writer.submit(.publicKey(key, of: wallet, now: now)) else {
            throw StoreError("the writer answered a public key with another kind of outcome")
        }
    }

    public func saveChannel(_ channel: ChannelRecord) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO channels (address, name, icon, url, created_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (address) DO UPDATE SET name = excluded.name, icon = excluded.icon, url = excluded.url
                    """,
                arguments: [Data(channel.address.bytes), channel.name, channel.icon, channel.url, channel.createdAt])
        }
    }

    public func removeChannel(_ address: EthereumAddress) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM channels WHERE address = ?", arguments: [Data(address.bytes)])
            let removed = db.changesCount > 0
            // Its webhook went with it (ON DELETE CASCADE); the events queued for it go too.
            try db.execute(sql: "DELETE FROM webhook_events WHERE channel = ?", arguments: [Data(address.bytes)])
            return removed
        }
    }

    public func channel(_ address: EthereumAddress) async throws -> ChannelRecord? {
        try await channelsWhere("WHERE address = ?", [Data(address.bytes)]).first
    }

    public func channels() async throws -> [ChannelRecord] {
        try await channelsWhere("ORDER BY name, address", [])
    }

    private func channelsWhere(_ clause: String, _ arguments: StatementArguments) async throws -> [ChannelRecord] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT address, name, icon, url, created_at FROM channels \(clause)", arguments: arguments
            )
            .map { row in
                let address: Data = row["address"]
                return ChannelRecord(
                    address: try EthereumAddress(bytes: Array(address)), name: row["name"], icon: row["icon"],
                    url: row["url"], createdAt: row["created_at"])
            }
        }
    }

    public func subscriberCount(of channel: EthereumAddress) async throws -> Int {
        try await read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM subscriptions WHERE channel = ?", arguments: [Data(channel.bytes)]) ?? 0
        }
    }

    public func subscriptions(of subscriber: EthereumAddress) async throws -> [SubscriptionRecord] {
        try await read { db in
            // The wallet's unread items per channel: its items that are not spam (at most the feed's
            // retention.feedItemsPerWallet), grouped by sender. A listing is rare beside the pushes that
            // read the total, which is kept as a number instead (UnreadCounterSQL).
            let unread = try RawStatement(
                db,
                """
                SELECT n.channel, COUNT(*) FROM feed_items f INDEXED BY feed_items_by_recipient
                JOIN notifications n ON n.id = f.notification
                WHERE f.recipient = ? AND f.spam = 0 AND f.read = 0 GROUP BY n.channel
                """, .address(subscriber)
            ).rows { (try EthereumAddress(bytes: $0.blob(0)), Int($0.integer(1))) }
            let unreadByChannel = Dictionary(unread, uniquingKeysWith: +)
            let rows = try RawStatement(
                db,
                """
                SELECT s.channel, c.name, s.since, c.settings, s.muted_until
                FROM subscriptions s JOIN channels c ON c.address = s.channel
                WHERE s.subscriber = ? ORDER BY s.since, s.channel
                """, .address(subscriber)
            ).rows { (try EthereumAddress(bytes: $0.blob(0)), $0.text(1), $0.integer(2), $0.text(3), $0.integer(4)) }
            return try rows.map { channel, name, since, settings, mutedUntil in
                let list = try SubscriberControlReads.stored(settings)
                let choices =
                    list.settings.isEmpty
                    ? [:] : try SubscriberControlReads.choices(channel: channel, subscriber: subscriber, in: db)
                return SubscriptionRecord(
                    channel: channel, name: name, since: since, unread: unreadByChannel[channel] ?? 0,
                    settings: EffectiveSetting.resolve(list, choices: choices), mutedUntil: mutedUntil)
            }
        }
    }

    public var writerStatistics: WriterStatistics.Snapshot { writer.statistics.snapshot() }

    public func checkHealth() async throws {
        _ = try await read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    public func close() async throws {
        // Closing twice is harmless: the second call finds the flag already set.
        if closed.exchange(true, ordering: .acquiringAndReleasing) { return }
        writer.stop()
        checkpointer.stop()
        try pool.close()
        // Released last: the next server on the file may start once nothing of this one writes.
        serveLock.withLock { $0 = nil }
    }

    /// Open while the server runs; closed at its graceful shutdown, after in-flight requests drained
    /// (the service group stops the HTTP server first).
    public func run() async throws {
        try? await gracefulShutdown()
        do {
            try await close()
            logger.info("storage closed")
        } catch {
            logger.error("closing storage failed: \(error)")
        }
    }

    /// Voids every claim on the outbox. A SQLite database has one server (its serve lock says so): at its
    /// start, claims left by an earlier run of it (killed mid-send) belong to no one, and its pushes
    /// should go now, not once the lease has passed.
    public func prepareToServe() async throws -> Int {
        try await write { db in
            try db.execute(
                sql: "UPDATE push_outbox SET claimed_until = NULL, claimed_by = NULL WHERE claimed_until IS NOT NULL")
            let released = db.changesCount
            // A webhook batch in flight when the earlier run died goes again now (at least once), not
            // once its lease has passed.
            try db.execute(
                sql: "UPDATE webhooks SET claimed_until = NULL, claimed_by = NULL WHERE claimed_until IS NOT NULL")
            return released
        }
    }
}
