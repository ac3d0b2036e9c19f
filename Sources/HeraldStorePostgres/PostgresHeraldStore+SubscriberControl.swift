public import HeraldCore
public import HeraldStore
import PostgresNIO

extension PostgresHeraldStore {
    public func apply(_ change: ChannelSettingsChange) async throws -> ChannelSettingsOutcome {
        try await control(.channelSettings(change)) { $0.channelSettings }
    }

    public func apply(_ change: SubscriberSettingsChange) async throws -> SubscriberSettingsOutcome {
        try await control(.subscriberSettings(change)) { $0.subscriberSettings }
    }

    public func apply(_ change: MuteChange) async throws -> MuteOutcome {
        try await control(.mute(change)) { $0.mute }
    }

    public func apply(_ change: ReadMarkChange) async throws -> ReadMarkOutcome {
        try await control(.readMark(change)) { $0.readMark }
    }

    public func channelSettings(of channel: EthereumAddress) async throws -> ChannelSettingsList? {
        let text = try await perform { [self] in
            try await client.query("SELECT settings FROM channels WHERE address = \(bytea(channel))", logger: logger)
                .rows { try $0.text(0) }.first
        }
        return try text.map(PostgresControlReads.stored)
    }
}

/// The reads the §10 operations and answers share.
enum PostgresControlReads {
    static func stored(_ text: String) throws -> ChannelSettingsList {
        do { return try ChannelSettingsList.stored(text) } catch {
            throw StoreError(.corrupt, "a channel's stored settings do not parse: \(error.message)")
        }
    }

    /// The wallet's unread items that are not spam: those added less those taken away (migration 0015),
    /// never below zero (items a node older than the migration stored were not added).
    static func unread(of wallet: ByteBuffer) -> PostgresQuery {
        """
        SELECT greatest(COALESCE((SELECT added FROM wallet_unread_added WHERE wallet = \(wallet)), 0)
                        - COALESCE((SELECT taken FROM wallet_unread_taken WHERE wallet = \(wallet)), 0), 0)
        """
    }

    /// The same as an expression of a statement whose wallet is the parameter `wallet` (e.g. `$1`).
    static func unread(parameter wallet: String) -> String {
        """
        greatest(COALESCE((SELECT added FROM wallet_unread_added WHERE wallet = \(wallet)), 0)
                 - COALESCE((SELECT taken FROM wallet_unread_taken WHERE wallet = \(wallet)), 0), 0)
        """
    }
}

/// The SQL of docs/protocol.md §10's operations, inside the batch's transaction and under the signer's
/// advisory lock: each reads what `SubscriberControlPlanner` needs, and spends its nonce and writes only
/// for a plan that saves (a refusal changes nothing).
extension PostgresWriteSQL {
    /// Takes out the read-sync pushes still queued, and not claimed, for the wallet ($1) on the bindings
    /// (platforms $2, tokens $3): newer ones replace them. Found through `push_outbox_read_sync` (migration
    /// 0012), not by reading the whole queue.
    static let dropQueuedReadSync = """
        DELETE FROM push_outbox o USING unnest($2::text[], $3::text[]) AS p(platform, token)
        WHERE o.wallet = $1 AND o.platform = p.platform AND o.device_token = p.token AND o.read_sync
          AND o.status = 'queued' AND o.claimed_until IS NULL
        """

    mutating func apply(_ write: SubscriberControlWrite) async throws -> SubscriberControlOutcome {
        let nonce = NonceSpend(
            signer: write.signer, nonce: write.signed.nonce, operation: write.signed.operation,
            retainedUntil: write.signed.nonceRetainedUntil)
        // Replay first, then the planner: a refusal spends no nonce.
        if let kept = try await stored(nonce) {
            return try IdempotencyPlanner.answer(kept, for: nonce.operation, decode: StoredAnswer.control)
        }
        let outcome: SubscriberControlOutcome?
        switch write {
        case .channelSettings(let change): outcome = try await apply(change, nonce: nonce)
        case .delegate(let change): outcome = try await apply(change, nonce: nonce)
        case .subscriberSettings(let change): outcome = try await apply(change, nonce: nonce)
        case .mute(let change): outcome = try await apply(change, nonce: nonce)
        case .readMark(let change): outcome = try await apply(change, nonce: nonce)
        case .webhook(let change): outcome = try await apply(change, nonce: nonce)
        }
        guard let outcome else { return try await answer(for: nonce, decode: StoredAnswer.control) }
        if case .refusal = outcome.kind { return outcome }
        try await keep(StoredAnswer.encode(outcome), for: nonce)
        try await remember(write.signed.publicKey, of: write.signer, now: write.signed.now)
        return outcome
    }

    /// nil: the nonce was spent meanwhile (by another node: this insert waited for its commit).
    private func apply(_ change: ChannelSettingsChange, nonce: NonceSpend) async throws -> SubscriberControlOutcome? {
        let channel = bytea(change.channel)
        // The row lock (FOR UPDATE) orders this with subscribers' choices being checked against the list.
        let current = try await connection.query(
            "SELECT settings FROM channels WHERE address = \(channel) FOR UPDATE", logger: logger
        ).rows { try $0.text(0) }.first
        let plan = SubscriberControlPlanner.plan(
            change, channelExists: current != nil, current: try current.map(PostgresControlReads.stored) ?? .empty)
        guard case .save(let list, let kept) = plan else { return .channelSettings(.unknownChannel) }
        guard try await spend(nonce, answer: nil) else { return nil }
        try await run("UPDATE channels SET settings = \(list.jsonText) WHERE address = \(channel)")
        try await run(
            """
            DELETE FROM subscriber_choices d
            WHERE d.channel = \(channel)
              AND NOT EXISTS (SELECT 1 FROM unnest(\(kept.map(\.id))::text[], \(kept.map(\.values.lowerBound))::bigint[],
                                                   \(kept.map(\.values.upperBound))::bigint[]) AS k(id, low, high)
                              WHERE k.id = d.setting AND d.value BETWEEN k.low AND k.high)
            """)
        return .channelSettings(.saved(list))
    }

    private func apply(_ change: SubscriberSettingsChange, nonce: NonceSpend) async throws -> SubscriberControlOutcome?
    {
        let channel = bytea(change.channel)
        let subscriber = bytea(change.subscriber)
        // FOR SHARE: a channel replacing its list waits for this choice (and then drops it if it must).
        let texts = try await connection.query(
            """
            SELECT c.settings FROM subscriptions s JOIN channels c ON c.address = s.channel
            WHERE s.channel = \(channel) AND s.subscriber = \(subscriber) FOR SHARE OF c
            """, logger: logger
        ).rows { try $0.text(0) }
        var facts = SubscriberFacts(list: nil)
        if let text = texts.first {
            let rows = try await connection.query(
                """
                SELECT setting, value FROM subscriber_choices WHERE channel = \(channel) AND subscriber = \(subscriber)
                """, logger: logger
            ).rows { (try $0.text(0), try $0.int(1)) }
            facts = SubscriberFacts(
                list: try PostgresControlReads.stored(text),
                choices: Dictionary(rows, uniquingKeysWith: { _, last in last }))
        }
        switch SubscriberControlPlanner.plan(change, facts: facts) {
        case .refuseNotSubscribed: return .subscriberSettings(.notSubscribed)
        case .refuse(let rejection): return .subscriberSettings(.refused(rejection))
        case .save(let choices, let effective):
            guard try await spend(nonce, answer: nil) else { return nil }
            let sorted = choices.sorted { $0.key < $1.key }
            try await run(
                """
                INSERT INTO subscriber_choices (channel, subscriber, setting, value)
                SELECT \(channel), \(subscriber), k.id, k.value
                FROM unnest(\(sorted.map(\.key))::text[], \(sorted.map(\.value))::bigint[]) AS k(id, value)
                ON CONFLICT (channel, subscriber, setting) DO UPDATE SET value = excluded.value
                """)
            return .subscriberSettings(.saved(effective))
        }
    }

    private func apply(_ change: MuteChange, nonce: NonceSpend) async throws -> SubscriberControlOutcome? {
        let channel = bytea(change.channel)
        let subscriber = bytea(change.subscriber)
        let subscribed =
            try await connection.query(
                "SELECT EXISTS (SELECT 1 FROM subscriptions WHERE channel = \(channel) AND subscriber = \(subscriber))",
                logger: logger
            ).rows { try $0.bool(0) }.first ?? false
        switch SubscriberControlPlanner.plan(change, subscribed: subscribed) {
        case .refuseNotSubscribed: return .mute(.notSubscribed)
        case .refuseOutOfRange: return .mute(.outOfRange)
        case .save(let until):
            guard try await spend(nonce, answer: nil) else { return nil }
            try await run(
                """
                UPDATE subscriptions SET muted_until = \(until) WHERE channel = \(channel) AND subscriber = \(subscriber)
                """)
            return .mute(.muted(until: until))
        }
    }

    private func apply(_ change: ReadMarkChange, nonce: NonceSpend) async throws -> SubscriberControlOutcome? {
        guard try await spend(nonce, answer: nil) else { return nil }
        let wallet = bytea(change.wallet)
        // The wallet's number before and after, as feeds read it (`PostgresControlReads.unread`). The mark
        // raises `taken` only: a broadcast in flight holds the wallet's `added` row until it commits, and
        // the mark does not wait for it (migration 0015).
        let before = try await connection.query(PostgresControlReads.unread(of: wallet), logger: logger).integer()
        try await run(
            """
            WITH marked AS (
              UPDATE feed_items SET read = true
              WHERE recipient = \(wallet) AND NOT read AND (sid <= \(change.upTo) OR sid = ANY(\(change.sids)::bigint[]))
              RETURNING spam)
            INSERT INTO wallet_unread_taken AS t (wallet, taken)
            SELECT \(wallet), count(*) FROM marked WHERE NOT spam HAVING count(*) > 0
            ON CONFLICT (wallet) DO UPDATE SET taken = t.taken + excluded.taken
            """)
        let after = try await connection.query(PostgresControlReads.unread(of: wallet), logger: logger).integer()
        let bindings = try await connection.query(
            """
            SELECT platform, device_token, created_at, last_seen FROM bindings WHERE wallet = \(wallet)
            ORDER BY created_at
            """, logger: logger
        ).rows { row in
            DeviceBindingRecord(
                wallet: change.wallet, platform: try row.platform(0), deviceToken: try row.text(1),
                createdAt: try row.int(2), lastSeen: try row.int(3))
        }
        let pushes = SubscriberControlPlanner.readSyncPushes(
            before: Int(before), after: Int(after), bindings: bindings, policy: change.policy)
        if !pushes.isEmpty {
            let platforms = pushes.map(\.platform.rawValue)
            let tokens = pushes.map(\.deviceToken)
            let counts = pushes.map { Int64($0.unread) }
            // A read-sync push replaces one still queued, and not claimed, for the same binding.
            var binds = PostgresBindings(capacity: 3)
            binds.append(wallet)
            binds.append(platforms)
            binds.append(tokens)
            try await run(PostgresQuery(unsafeSQL: Self.dropQueuedReadSync, binds: binds))
            try await run(
                """
                INSERT INTO push_outbox (wallet, platform, device_token, queued_at, next_attempt_at, badge, read_sync)
                SELECT \(wallet), p.platform, p.token, \(change.signed.now), \(change.signed.now), p.badge, true
                FROM unnest(\(platforms)::text[], \(tokens)::text[], \(counts)::bigint[]) AS p(platform, token, badge)
                """)
        }
        return .readMark(.marked(unread: Int(after), pushes: pushes.count))
    }
}

extension SubscriberControlOutcome {
    enum Kind { case refusal, applied }

    /// Whether the operation was refused (nothing written, no key to remember) or applied.
    var kind: Kind {
        switch self {
        case .channelSettings(.saved), .delegate(.applied), .subscriberSettings(.saved), .mute(.muted),
            .readMark(.marked), .webhook(.applied):
            return .applied
        default: return .refusal
        }
    }
}
