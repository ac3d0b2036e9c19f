import GRDB
import HeraldCore
import HeraldStore

/// The SQL of one change, inside the batch's transaction. Later changes in a batch see earlier ones.
enum DeviceChangeSQL {
    /// Records a wallet's public key. A wallet's key never changes (the address is its hash), so the
    /// first one recorded stands, and wallets recorded recently need no probe at all.
    static func remember(
        _ key: PublicKey, of wallet: EthereumAddress, now: Int64, in db: Database, knownKeys: KnownWalletKeys,
        batch: inout BatchNonces
    ) throws {
        guard !batch.keysRemembered(wallet) && !knownKeys.contains(wallet) else { return }
        let remember = try RawStatement(
            db, "INSERT OR IGNORE INTO wallet_keys (wallet, public_key, updated_at) VALUES (?, ?, ?)")
        remember.bind(1, wallet.bytes)
        remember.bind(2, key.uncompressed)
        remember.bind(3, now)
        try remember.execute()
        batch.rememberKey(wallet)
    }

    /// Nonces spent by the batch being written, not yet committed.
    struct BatchNonces {
        private var seen = Set<NonceDigest>()
        private(set) var entries: [(NonceDigest, Int64)] = []

        func contains(_ digest: NonceDigest) -> Bool { seen.contains(digest) }

        mutating func add(_ digest: NonceDigest, _ retainedUntil: Int64) {
            seen.insert(digest)
            entries.append((digest, retainedUntil))
        }

        private(set) var keys: [EthereumAddress] = []

        mutating func rememberKey(_ wallet: EthereumAddress) { keys.append(wallet) }

        func keysRemembered(_ wallet: EthereumAddress) -> Bool { keys.contains(wallet) }
    }

    /// Reads the facts, lets `DeviceChangePlanner` decide, then spends the nonce with the answer and writes
    /// the plan: a refused change spends nothing and writes nothing; a spent nonce is answered by
    /// `IdempotencyPlanner` (the first answer for the same operation, `replayed` for another).
    static func apply(
        _ change: DeviceChange, in db: Database, ledger: NonceLedger, knownKeys: KnownWalletKeys,
        batch: inout BatchNonces
    ) throws -> DeviceChangeOutcome {
        let nonce = NonceSpend(
            signer: change.wallet, nonce: change.nonce, operation: change.operation,
            retainedUntil: change.nonceRetainedUntil)
        if nonce.isSpent(batch: batch, ledger: ledger) { return try nonce.answer(in: db, decode: StoredAnswer.device) }
        let facts = change.action == .register ? try bindingFacts(change, in: db) : nil
        let plan = DeviceChangePlanner.plan(change, facts: facts ?? BindingFacts(exists: true, walletBindings: 0))
        if plan == .refuseOverLimit {
            // A spent nonce first: a copy of an applied operation is answered as it was, even over the limit.
            guard let spent = try nonce.stored(in: db) else { return .overLimit }
            return try IdempotencyPlanner.answer(spent, for: change.operation, decode: StoredAnswer.device)
        }
        let known = plan.knownOutcome
        guard try nonce.spend(answer: known.flatMap(StoredAnswer.encode), in: db, batch: &batch) else {
            return try nonce.answer(in: db, decode: StoredAnswer.device)
        }
        let outcome = try write(plan, for: change, in: db)
        if known == nil { try nonce.keep(StoredAnswer.encode(outcome), in: db) }
        try remember(change.publicKey, of: change.wallet, now: change.now, in: db, knownKeys: knownKeys, batch: &batch)
        return outcome
    }

    private static func bindingFacts(_ change: DeviceChange, in db: Database) throws -> BindingFacts {
        // One range scan of the wallet's few bindings on the primary key answers both.
        let facts = try RawStatement(
            db,
            """
            SELECT COALESCE(SUM(platform = ? AND device_token = ?), 0), COUNT(*) FROM bindings WHERE wallet = ?
            """)
        facts.bind(1, change.platform.rawValue)
        facts.bind(2, change.deviceToken)
        facts.bind(3, change.wallet.bytes)
        guard let row = try facts.rows({ ($0.integer(0), $0.integer(1)) }).first else {
            throw StoreError("the binding facts returned no row")
        }
        return BindingFacts(exists: row.0 > 0, walletBindings: Int(row.1))
    }

    private static func write(
        _ plan: DeviceChangePlan, for change: DeviceChange, in db: Database
    ) throws
        -> DeviceChangeOutcome
    {
        let wallet = change.wallet.bytes
        let platform = change.platform.rawValue
        switch plan {
        case .refresh(let webPush):
            let refresh = try RawStatement(
                db, "UPDATE bindings SET last_seen = ? WHERE wallet = ? AND platform = ? AND device_token = ?")
            refresh.bind(1, change.now)
            refresh.bind(2, wallet)
            refresh.bind(3, platform)
            refresh.bind(4, change.deviceToken)
            try refresh.execute()
            try storeKeys(webPush, for: change, in: db)
            return .registered(created: false)
        case .create(let webPush, let confirm):
            let insert = try RawStatement(
                db,
                "INSERT INTO bindings (wallet, platform, device_token, created_at, last_seen) VALUES (?, ?, ?, ?, ?)"
            )
            insert.bind(1, wallet)
            insert.bind(2, platform)
            insert.bind(3, change.deviceToken)
            insert.bind(4, change.now)
            insert.bind(5, change.now)
            try insert.execute()
            if confirm {
                let queue = try RawStatement(
                    db,
                    """
                    INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
                    VALUES (NULL, ?, ?, ?, ?, ?)
                    """)
                queue.bind(1, wallet)
                queue.bind(2, platform)
                queue.bind(3, change.deviceToken)
                queue.bind(4, change.now)
                queue.bind(5, change.now)
                try queue.execute()
            }
            try storeKeys(webPush, for: change, in: db)
            return .registered(created: true)
        case .remove:
            let delete = try RawStatement(
                db, "DELETE FROM bindings WHERE wallet = ? AND platform = ? AND device_token = ?")
            delete.bind(1, wallet)
            delete.bind(2, platform)
            delete.bind(3, change.deviceToken)
            try delete.execute()
            return delete.changes > 0 ? .unregistered : .absent
        case .refuseOverLimit:
            return .overLimit
        }
    }

    private static func storeKeys(_ webPush: WebPushSubscription?, for change: DeviceChange, in db: Database) throws {
        guard let webPush else { return }
        let keys = try RawStatement(
            db, "UPDATE bindings SET p256dh = ?, auth = ? WHERE wallet = ? AND platform = ? AND device_token = ?")
        keys.bind(1, webPush.p256dh)
        keys.bind(2, webPush.auth)
        keys.bind(3, change.wallet.bytes)
        keys.bind(4, change.platform.rawValue)
        keys.bind(5, change.deviceToken)
        try keys.execute()
    }
}
