import HeraldCore
import HeraldStore
import Logging
import PostgresNIO

/// One write for the group-commit writer.
enum PostgresWrite: Sendable {
    case device(DeviceChange)
    case subscription(SubscriptionChange)
    case notification(NotificationSubmission)
    /// A wallet's key from a FeedAccess (which changes nothing else): in a batch's transaction, so that
    /// a burst of reads by wallets never seen shares one WAL flush instead of a commit each.
    case publicKey(PublicKey, of: EthereumAddress, now: Int64)

    /// The wallet whose signature the write carries: its nonce and its lock.
    var signer: EthereumAddress {
        switch self {
        case .device(let change): return change.wallet
        case .subscription(let change): return change.subscriber
        case .notification(let submission): return submission.channel
        case .publicKey(_, let wallet, _): return wallet
        }
    }

    /// Whether the write spends a nonce or counts rows under its signer's advisory lock. A key's insert
    /// does neither (the first key stands, `ON CONFLICT DO NOTHING`), so it takes no lock.
    var needsSignerLock: Bool {
        if case .publicKey = self { return false }
        return true
    }
}

enum PostgresWriteOutcome: Sendable {
    case device(DeviceChangeOutcome)
    case subscription(SubscriptionChangeOutcome)
    case notification(NotificationOutcome)
    case publicKeyRemembered
}

/// The SQL of one write, inside its batch's transaction, which holds the advisory lock of every
/// signer in the batch. Later writes of a batch see the earlier ones.
///
/// The nonce is spent first, by an insert into `nonces` whose key is the digest: a conflict is the
/// `replayed` outcome and nothing else is done. A change then refused (over the binding limit, an
/// unknown channel) deletes its nonce again, so that it spends nothing, as on SQLite.
struct PostgresWriteSQL {
    let connection: PostgresConnection
    let logger: Logger
    let knownKeys: KnownWalletKeys
    /// Wallets whose key this batch stored (they join `knownKeys` once committed).
    var rememberedKeys: Set<EthereumAddress> = []

    init(connection: PostgresConnection, logger: Logger, knownKeys: KnownWalletKeys) {
        self.connection = connection
        self.logger = logger
        self.knownKeys = knownKeys
    }

    mutating func apply(_ write: PostgresWrite) async throws -> PostgresWriteOutcome {
        switch write {
        case .device(let change): return .device(try await apply(change))
        case .subscription(let change): return .subscription(try await apply(change))
        case .notification(let submission): return .notification(try await submit(submission))
        case .publicKey(let key, let wallet, let now):
            try await remember(key, of: wallet, now: now)
            return .publicKeyRemembered
        }
    }

    /// Takes the advisory locks of the batch's signers, in key order so that two nodes' batches never
    /// wait on each other in a cycle.
    func lockSigners(of writes: [PostgresWrite]) async throws {
        let keys = Array(Set(writes.filter(\.needsSignerLock).map { walletLockKey($0.signer) })).sorted()
        guard !keys.isEmpty else { return }
        try await run(
            """
            SELECT count(pg_advisory_xact_lock(k)) FROM (SELECT k FROM unnest(\(keys)::bigint[]) AS t(k) ORDER BY k) s
            """)
    }

    /// A device change in one statement, one round trip: the nonce is spent, the binding changed, the
    /// setup confirmation queued and the wallet's key remembered together. The nonce is spent only
    /// when the change will be made (a refresh, or an insert under the limit, judged on the snapshot
    /// the signer's lock keeps still), so a refused change spends nothing without a second statement.
    mutating func apply(_ change: DeviceChange) async throws -> DeviceChangeOutcome {
        let digest = bytea(NonceDigest(signer: change.wallet, nonce: change.nonce).bytes)
        let wallet = bytea(change.wallet)
        let platform = change.platform.rawValue
        let token = change.deviceToken
        let limit = Int64(change.maxBindingsPerWallet)
        let needsKey = !rememberedKeys.contains(change.wallet) && !knownKeys.contains(change.wallet)
        let key = bytea(change.publicKey.uncompressed)
        // A Web Push register stores its subscription's keys, replacing older ones (PROTOCOL §9).
        let p256dh = change.webPush?.p256dh
        let auth = change.webPush?.auth
        switch change.action {
        case .register:
            let row = try await connection.query(
                """
                WITH prior AS (
                  SELECT EXISTS (SELECT 1 FROM nonces WHERE digest = \(digest)) AS spent,
                         EXISTS (SELECT 1 FROM bindings
                                 WHERE wallet = \(wallet) AND platform = \(platform) AND device_token = \(token))
                         OR (SELECT count(*) FROM bindings WHERE wallet = \(wallet)) < \(limit) AS allowed),
                spent AS (
                  INSERT INTO nonces (digest, retained_until)
                  SELECT \(digest), \(change.nonceRetainedUntil) FROM prior WHERE allowed
                  ON CONFLICT (digest) DO NOTHING RETURNING 1),
                refreshed AS (
                  UPDATE bindings SET last_seen = \(change.now), p256dh = \(p256dh), auth = \(auth)
                  WHERE wallet = \(wallet) AND platform = \(platform) AND device_token = \(token)
                    AND EXISTS (SELECT 1 FROM spent)
                  RETURNING 1),
                inserted AS (
                  INSERT INTO bindings (wallet, platform, device_token, created_at, last_seen, p256dh, auth)
                  SELECT \(wallet), \(platform), \(token), \(change.now), \(change.now), \(p256dh), \(auth)
                  WHERE EXISTS (SELECT 1 FROM spent) AND NOT EXISTS (SELECT 1 FROM refreshed)
                  RETURNING 1),
                confirmed AS (
                  INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
                  SELECT NULL, \(wallet), \(platform), \(token), \(change.now), \(change.now)
                  FROM inserted WHERE \(change.queueSetupConfirmation) RETURNING 1),
                remembered AS (
                  INSERT INTO wallet_keys (wallet, public_key, updated_at)
                  SELECT \(wallet), \(key), \(change.now) WHERE \(needsKey) AND EXISTS (SELECT 1 FROM spent)
                  ON CONFLICT (wallet) DO NOTHING RETURNING 1)
                SELECT prior.spent, prior.allowed, (SELECT count(*) FROM spent), (SELECT count(*) FROM refreshed),
                       (SELECT count(*) FROM inserted)
                FROM prior
                """, logger: logger
            ).rows { (try $0.bool(0), try $0.bool(1), try $0.int(2), try $0.int(3), try $0.int(4)) }.first
            guard let (spentBefore, allowed, spent, refreshed, inserted) = row else {
                throw StoreError("the registration statement returned no row")
            }
            if refreshed > 0 || inserted > 0 {
                if needsKey { rememberedKeys.insert(change.wallet) }
                return .registered(created: inserted > 0)
            }
            if spent > 0 { throw StoreError("the nonce was spent but the binding neither refreshed nor inserted") }
            // Replay first, as on SQLite; a nonce spent meanwhile by another node's transaction (its
            // insert waited for that commit, then did nothing) is a replay too.
            if spentBefore || allowed { return .replayed }
            return .overLimit
        case .unregister:
            let row =
                try await connection.query(
                    """
                    WITH spent AS (
                      INSERT INTO nonces (digest, retained_until) VALUES (\(digest), \(change.nonceRetainedUntil))
                      ON CONFLICT (digest) DO NOTHING RETURNING 1),
                    deleted AS (
                      DELETE FROM bindings
                      WHERE wallet = \(wallet) AND platform = \(platform) AND device_token = \(token)
                        AND EXISTS (SELECT 1 FROM spent)
                      RETURNING 1),
                    remembered AS (
                      INSERT INTO wallet_keys (wallet, public_key, updated_at)
                      SELECT \(wallet), \(key), \(change.now) WHERE \(needsKey) AND EXISTS (SELECT 1 FROM spent)
                      ON CONFLICT (wallet) DO NOTHING RETURNING 1)
                    SELECT (SELECT count(*) FROM spent), (SELECT count(*) FROM deleted)
                    """, logger: logger
                ).rows { (try $0.int(0), try $0.int(1)) }.first ?? (0, 0)
            guard row.0 > 0 else { return .replayed }
            if needsKey { rememberedKeys.insert(change.wallet) }
            return row.1 > 0 ? .unregistered : .absent
        }
    }

    mutating func apply(_ change: SubscriptionChange) async throws -> SubscriptionChangeOutcome {
        let digest = NonceDigest(signer: change.subscriber, nonce: change.nonce).bytes
        guard try await spend(digest, retainedUntil: change.nonceRetainedUntil) else { return .replayed }
        let channel = bytea(change.channel)
        let subscriber = bytea(change.subscriber)
        let known = try await connection.query(
            "SELECT count(*) FROM channels WHERE address = \(channel)", logger: logger
        ).integer()
        guard known > 0 else {
            try await unspend(digest)
            return .unknownChannel
        }
        let outcome: SubscriptionChangeOutcome
        switch change.action {
        case .subscribe:
            let inserted = try await connection.query(
                """
                WITH inserted AS (
                  INSERT INTO subscriptions (channel, subscriber, since)
                  VALUES (\(channel), \(subscriber), \(change.now))
                  ON CONFLICT (channel, subscriber) DO NOTHING RETURNING 1)
                SELECT count(*) FROM inserted
                """, logger: logger
            ).integer()
            outcome = .subscribed(created: inserted > 0)
        case .unsubscribe:
            let deleted = try await connection.query(
                """
                WITH deleted AS (
                  DELETE FROM subscriptions WHERE channel = \(channel) AND subscriber = \(subscriber) RETURNING 1)
                SELECT count(*) FROM deleted
                """, logger: logger
            ).integer()
            outcome = .unsubscribed(existed: deleted > 0)
        }
        try await remember(change.publicKey, of: change.subscriber, now: change.now)
        return outcome
    }

    /// Spends a nonce: false when it was spent already (by this node or any other).
    func spend(_ digest: [UInt8], retainedUntil: Int64) async throws -> Bool {
        let inserted = try await connection.query(
            """
            WITH inserted AS (
              INSERT INTO nonces (digest, retained_until) VALUES (\(bytea(digest)), \(retainedUntil))
              ON CONFLICT (digest) DO NOTHING RETURNING 1)
            SELECT count(*) FROM inserted
            """, logger: logger
        ).integer()
        return inserted > 0
    }

    /// Gives back a nonce this transaction spent, for a change that was refused.
    func unspend(_ digest: [UInt8]) async throws {
        try await run("DELETE FROM nonces WHERE digest = \(bytea(digest))")
    }

    /// Records a wallet's public key; the first one recorded stands (a wallet's key never changes).
    mutating func remember(_ key: PublicKey, of wallet: EthereumAddress, now: Int64) async throws {
        guard !rememberedKeys.contains(wallet) && !knownKeys.contains(wallet) else { return }
        try await run(
            """
            INSERT INTO wallet_keys (wallet, public_key, updated_at)
            VALUES (\(bytea(wallet)), \(bytea(key.uncompressed)), \(now))
            ON CONFLICT (wallet) DO NOTHING
            """)
        rememberedKeys.insert(wallet)
    }

    func run(_ query: PostgresQuery) async throws {
        for try await _ in try await connection.query(query, logger: logger) {}
    }
}
