import HeraldCore
import HeraldStore
import Logging
import PostgresNIO

/// One write for the group-commit writer.
enum PostgresWrite: Sendable {
    case device(DeviceChange)
    case subscription(SubscriptionChange)
    case notification(NotificationSubmission)
    /// docs/protocol.md §10's operations.
    case control(SubscriberControlWrite)
    /// A wallet's key from a FeedAccess (which changes nothing else): in a batch's transaction, so that
    /// a burst of reads by wallets never seen shares one WAL flush instead of a commit each.
    case publicKey(PublicKey, of: EthereumAddress, now: Int64)

    /// The wallet whose signature the write carries: its nonce and its lock.
    var signer: EthereumAddress {
        switch self {
        case .device(let change): return change.wallet
        case .subscription(let change): return change.subscriber
        case .notification(let submission): return submission.signer
        case .control(let write): return write.signer
        case .publicKey(_, let wallet, _): return wallet
        }
    }

    /// The wallets whose advisory locks the write takes: its signer's, and for a delegate's send the
    /// channel's too (every send of a channel and every Delegate change of it take the channel's lock,
    /// so a removal and a send by that delegate never overlap: docs/protocol.md §11.1).
    ///
    /// A Subscription takes its channel's lock too: the webhook events of a channel are queued under it,
    /// so that they commit in the order of their ids and a receiver gets them in order (§11.3).
    var lockedWallets: [EthereumAddress] {
        guard needsSignerLock else { return [] }
        switch self {
        case .notification(let submission) where submission.signer != submission.channel:
            return [submission.channel, submission.signer]
        case .subscription(let change):
            return [change.subscriber, change.channel]
        default:
            return [signer]
        }
    }

    /// A type 1 notification: every subscriber of its channel, so its time grows with them.
    var isBroadcast: Bool {
        if case .notification(let submission) = self { return submission.payload.kind == .broadcast }
        return false
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
    case control(SubscriberControlOutcome)
    case publicKeyRemembered
}

/// The SQL of one write, inside its batch's transaction, which holds the advisory lock of every
/// signer in the batch. Later writes of a batch see the earlier ones.
///
/// Each write reads what its planner needs (HeraldStore's `DeviceChangePlanner`, `NotificationPlanner`,
/// `SubscriptionChangePlanner`), and writes the plan: the nonce is spent by an insert into `nonces`
/// whose key is the digest (a conflict is the `replayed` outcome and nothing else is done). A refused
/// change (over the binding limit, an unknown channel) spends nothing, as on SQLite.
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
        case .control(let write): return .control(try await apply(write))
        case .publicKey(let key, let wallet, let now):
            try await remember(key, of: wallet, now: now)
            return .publicKeyRemembered
        }
    }

    /// Takes the advisory locks of the batch's signers, in key order so that two nodes' batches never
    /// wait on each other in a cycle.
    func lockSigners(of writes: [PostgresWrite]) async throws {
        try await Self.lock(writes.flatMap(\.lockedWallets), on: connection, logger: logger)
    }

    /// The advisory lock keys of the batch's signers, in the order they are taken.
    static func lockKeys(of writes: [PostgresWrite]) -> [Int64] { lockKeys(of: writes.flatMap(\.lockedWallets)) }

    private static func lockKeys(of wallets: [EthereumAddress]) -> [Int64] {
        Array(Set(wallets.map(walletLockKey))).sorted()
    }

    /// Takes the transaction's advisory locks of `wallets`, in key order, so that two transactions taking
    /// several never wait on each other in a cycle.
    static func lock(_ wallets: [EthereumAddress], on connection: PostgresConnection, logger: Logger) async throws {
        let keys = lockKeys(of: wallets)
        guard !keys.isEmpty else { return }
        _ = try await connection.execute(WalletLocksStatement(keys: keys), logger: logger).collected()
    }

    /// A device change. A register goes through `applyRegistrations`, alone as in a batch. An unregister
    /// needs no facts: one statement spends the nonce, removes the binding and remembers the key, and its
    /// answer (was there a binding?) is kept by a second.
    mutating func apply(_ change: DeviceChange) async throws -> DeviceChangeOutcome {
        guard change.action == .unregister else {
            guard let outcome = try await applyRegistrations([change]).first else {
                throw StoreError("a registration was left without an outcome")
            }
            return outcome
        }
        let nonce = NonceSpend(
            signer: change.wallet, nonce: change.nonce, operation: change.operation,
            retainedUntil: change.nonceRetainedUntil)
        let needsKey = !rememberedKeys.contains(change.wallet) && !knownKeys.contains(change.wallet)
        let row =
            try await connection.execute(
                UnregisterStatement(change: change, nonce: nonce, needsKey: needsKey), logger: logger
            ).collected().first ?? (0, 0)
        // Not spent: another node's transaction spent it meanwhile (this insert waited for that commit).
        guard row.spent > 0 else { return try await answer(for: nonce, decode: StoredAnswer.device) }
        if needsKey { rememberedKeys.insert(change.wallet) }
        let outcome: DeviceChangeOutcome = row.removed > 0 ? .unregistered : .absent
        try await keep(StoredAnswer.encode(outcome), for: nonce)
        return outcome
    }

    /// The plan as the flags of `RegistrationWriteStatement`: nothing in the statement decides.
    static func flags(for plan: DeviceChangePlan) -> RegistrationWriteStatement.Flags {
        var flags = RegistrationWriteStatement.Flags()
        switch plan {
        case .refresh(let keys):
            flags.refresh = true
            flags.webPush = keys
        case .create(let keys, let confirmation):
            flags.create = true
            flags.confirm = confirmation
            flags.webPush = keys
        case .remove, .refuseOverLimit:
            break
        }
        return flags
    }

    mutating func apply(_ change: SubscriptionChange) async throws -> SubscriptionChangeOutcome {
        let nonce = NonceSpend(
            signer: change.subscriber, nonce: change.nonce, operation: change.operation,
            retainedUntil: change.nonceRetainedUntil)
        let channel = bytea(change.channel)
        let subscriber = bytea(change.subscriber)
        let facts = try await connection.query(
            """
            SELECT n.digest IS NOT NULL, n.operation, n.answer, EXISTS (SELECT 1 FROM channels WHERE address = \(channel)),
                   (SELECT events FROM webhooks WHERE channel = \(channel))
            FROM (SELECT 1) AS one LEFT JOIN nonces n ON n.digest = \(bytea(nonce.digest.bytes))
            """, logger: logger
        ).rows { (try $0.spentNonce(0), try $0.bool(3), try $0.optionalText(4)) }.first
        guard let (kept, channelExists, webhookEvents) = facts else {
            throw StoreError("the subscription facts returned no row")
        }
        // Replay first, then the planner: a refusal spends no nonce.
        if let kept {
            return try IdempotencyPlanner.answer(kept, for: change.operation, decode: StoredAnswer.subscription)
        }
        let plan = SubscriptionChangePlanner.plan(change, channelExists: channelExists)
        guard plan != .refuseUnknownChannel else { return .unknownChannel }
        guard try await spend(nonce, answer: nil) else {
            return try await answer(for: nonce, decode: StoredAnswer.subscription)
        }
        let outcome: SubscriptionChangeOutcome
        switch plan {
        case .refuseUnknownChannel:
            return .unknownChannel
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
        try await keep(StoredAnswer.encode(outcome), for: nonce)
        try await queue(
            WebhookEventPlanner.event(
                for: change, outcome: outcome, webhook: try webhookEvents.map(PostgresWebhooks.stored)),
            at: change.now)
        try await remember(change.publicKey, of: change.subscriber, now: change.now)
        return outcome
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
