import GRDB
import HeraldCore
import HeraldStore

/// The SQL of docs/protocol.md §10's operations, inside the batch's transaction: each reads what
/// `SubscriberControlPlanner` needs, and spends its nonce and writes only for a plan that saves (a
/// refusal changes nothing). The single writer serialises them with the sends that read their rows.
enum SubscriberControlSQL {
    /// Takes out the read-sync push still queued, and not claimed, for one binding (wallet, platform,
    /// token): a newer one replaces it. Found through `push_outbox_read_sync` (migration 0017).
    static let dropQueuedReadSync = """
        DELETE FROM push_outbox
        WHERE wallet = ? AND platform = ? AND device_token = ? AND read_sync = 1 AND status = 'queued'
          AND claimed_until IS NULL
        """

    static func apply(
        _ write: SubscriberControlWrite, in db: Database, ledger: NonceLedger, knownKeys: KnownWalletKeys,
        batch: inout DeviceChangeSQL.BatchNonces
    ) throws -> SubscriberControlOutcome {
        let nonce = NonceSpend(
            signer: write.signer, nonce: write.signed.nonce, operation: write.signed.operation,
            retainedUntil: write.signed.nonceRetainedUntil)
        if nonce.isSpent(batch: batch, ledger: ledger) { return try nonce.answer(in: db, decode: StoredAnswer.control) }
        var session = Session(db: db, nonce: nonce, signed: write.signed, signer: write.signer)
        let outcome: SubscriberControlOutcome
        switch write {
        case .channelSettings(let change): outcome = try session.apply(change, batch: &batch)
        case .delegate(let change): outcome = try session.apply(change, batch: &batch)
        case .subscriberSettings(let change): outcome = try session.apply(change, batch: &batch)
        case .mute(let change): outcome = try session.apply(change, batch: &batch)
        case .readMark(let change): outcome = try session.apply(change, batch: &batch)
        case .webhook(let change): outcome = try session.apply(change, batch: &batch)
        }
        if case .replayed = outcome { return try nonce.answer(in: db, decode: StoredAnswer.control) }
        if session.spent {
            try nonce.keep(StoredAnswer.encode(outcome), in: db)
            try DeviceChangeSQL.remember(
                write.signed.publicKey, of: write.signer, now: write.signed.now, in: db, knownKeys: knownKeys,
                batch: &batch)
        }
        return outcome
    }

    /// One operation's statements, with its nonce spent once its plan saves.
    private struct Session {
        let db: Database
        let nonce: NonceSpend
        let signed: SignedChange
        let signer: EthereumAddress
        private(set) var spent = false

        init(db: Database, nonce: NonceSpend, signed: SignedChange, signer: EthereumAddress) {
            self.db = db
            self.nonce = nonce
            self.signed = signed
            self.signer = signer
        }

        /// False: another process spent it first; `apply` then answers what `nonces` holds for it. The
        /// answer is kept once the writes decided it.
        mutating func spend(batch: inout DeviceChangeSQL.BatchNonces) throws -> Bool {
            spent = try nonce.spend(answer: nil, in: db, batch: &batch)
            return spent
        }

        mutating func apply(
            _ change: ChannelSettingsChange, batch: inout DeviceChangeSQL.BatchNonces
        ) throws -> SubscriberControlOutcome {
            let current = try SubscriberControlReads.settings(of: change.channel, in: db)
            let plan = SubscriberControlPlanner.plan(
                change, channelExists: current != nil, current: current ?? .empty)
            guard case .save(let list, let kept) = plan else { return .channelSettings(.unknownChannel) }
            guard try spend(batch: &batch) else { return .replayed }
            try RawStatement(
                db, "UPDATE channels SET settings = ? WHERE address = ?", .text(list.jsonText),
                .address(change.channel)
            ).execute()
            try dropChoices(of: change.channel, except: kept)
            return .channelSettings(.saved(list))
        }

        mutating func apply(
            _ change: DelegateChange, batch: inout DeviceChangeSQL.BatchNonces
        ) throws -> SubscriberControlOutcome {
            let plan = try DelegatesSQL.plan(change, in: db)
            guard case .applied = plan.answer else { return .delegate(plan.answer) }
            guard try spend(batch: &batch) else { return .replayed }
            try DelegatesSQL.write(plan, change, in: db)
            return .delegate(plan.answer)
        }

        mutating func apply(
            _ change: WebhookChange, batch: inout DeviceChangeSQL.BatchNonces
        ) throws -> SubscriberControlOutcome {
            let plan = try WebhooksSQL.plan(change, in: db)
            guard case .applied = plan.answer else { return .webhook(plan.answer) }
            guard try spend(batch: &batch) else { return .replayed }
            try WebhooksSQL.write(plan, change, in: db)
            return .webhook(plan.answer)
        }

        /// Deletes the channel's choices a new list no longer allows: of settings not kept, or outside the
        /// kept range.
        private func dropChoices(of channel: EthereumAddress, except kept: [KeptChoices]) throws {
            let ids = JSONValue.array(kept.map { .string($0.id) }).jsonText
            try RawStatement(
                db,
                "DELETE FROM subscriber_choices WHERE channel = ? AND setting NOT IN (SELECT value FROM json_each(?))",
                .address(channel), .text(ids)
            ).execute()
            for keep in kept {
                try RawStatement(
                    db,
                    "DELETE FROM subscriber_choices WHERE channel = ? AND setting = ? AND value NOT BETWEEN ? AND ?",
                    .address(channel), .text(keep.id), .integer(keep.values.lowerBound),
                    .integer(keep.values.upperBound)
                ).execute()
            }
        }

        mutating func apply(
            _ change: SubscriberSettingsChange, batch: inout DeviceChangeSQL.BatchNonces
        ) throws -> SubscriberControlOutcome {
            let facts = try SubscriberControlReads.subscriberFacts(
                channel: change.channel, subscriber: change.subscriber, in: db)
            switch SubscriberControlPlanner.plan(change, facts: facts) {
            case .refuseNotSubscribed: return .subscriberSettings(.notSubscribed)
            case .refuse(let rejection): return .subscriberSettings(.refused(rejection))
            case .save(let choices, let effective):
                guard try spend(batch: &batch) else { return .replayed }
                for (id, value) in choices.sorted(by: { $0.key < $1.key }) {
                    try RawStatement(
                        db,
                        """
                        INSERT INTO subscriber_choices (channel, subscriber, setting, value) VALUES (?, ?, ?, ?)
                        ON CONFLICT (channel, subscriber, setting) DO UPDATE SET value = excluded.value
                        """, .address(change.channel), .address(change.subscriber), .text(id), .integer(value)
                    ).execute()
                }
                return .subscriberSettings(.saved(effective))
            }
        }

        mutating func apply(
            _ change: MuteChange, batch: inout DeviceChangeSQL.BatchNonces
        ) throws
            -> SubscriberControlOutcome
        {
            let subscribed =
                try RawStatement(
                    db, "SELECT 1 FROM subscriptions WHERE channel = ? AND subscriber = ?", .address(change.channel),
                    .address(change.subscriber)
                ).integer() != nil
            switch SubscriberControlPlanner.plan(change, subscribed: subscribed) {
            case .refuseNotSubscribed: return .mute(.notSubscribed)
            case .refuseOutOfRange: return .mute(.outOfRange)
            case .save(let until):
                guard try spend(batch: &batch) else { return .replayed }
                try RawStatement(
                    db, "UPDATE subscriptions SET muted_until = ? WHERE channel = ? AND subscriber = ?",
                    .integer(until), .address(change.channel), .address(change.subscriber)
                ).execute()
                return .mute(.muted(until: until))
            }
        }

        mutating func apply(
            _ change: ReadMarkChange, batch: inout DeviceChangeSQL.BatchNonces
        ) throws
            -> SubscriberControlOutcome
        {
            guard try spend(batch: &batch) else { return .replayed }
            let before = try UnreadCounterSQL.unread(of: change.wallet, in: db)
            // Items that are not spam and those that are, apart: only the first count (and both walk
            // feed_items_by_recipient (recipient, spam, sid) to the mark).
            var markedUnread: Int64 = 0
            if change.upTo > 0 {
                for spam in [Int64(0), 1] {
                    let mark = try RawStatement(
                        db, "UPDATE feed_items SET read = 1 WHERE recipient = ? AND spam = ? AND sid <= ? AND read = 0",
                        .address(change.wallet), .integer(spam), .integer(change.upTo))
                    try mark.execute()
                    if spam == 0 { markedUnread += Int64(mark.changes) }
                }
            }
            if !change.sids.isEmpty {
                let sids = JSONValue.array(change.sids.map { .number(String($0)) }).jsonText
                for spam in [Int64(0), 1] {
                    let mark = try RawStatement(
                        db,
                        """
                        UPDATE feed_items SET read = 1
                        WHERE sid IN (SELECT value FROM json_each(?)) AND recipient = ? AND spam = ? AND read = 0
                        """, .text(sids), .address(change.wallet), .integer(spam))
                    try mark.execute()
                    if spam == 0 { markedUnread += Int64(mark.changes) }
                }
            }
            try UnreadCounterSQL.add(-markedUnread, to: change.wallet, in: db)
            let after = before - Int(markedUnread)
            let bindings = try SubscriberControlReads.bindings(of: change.wallet, in: db)
            let pushes = SubscriberControlPlanner.readSyncPushes(
                before: before, after: after, bindings: bindings, policy: change.policy)
            for push in pushes { try queue(push, for: change.wallet) }
            return .readMark(.marked(unread: after, pushes: pushes.count))
        }

        /// A read-sync push replaces one still queued for the same binding (docs/protocol.md §10).
        private func queue(_ push: ReadSyncPush, for wallet: EthereumAddress) throws {
            try RawStatement(
                db, SubscriberControlSQL.dropQueuedReadSync, .address(wallet), .text(push.platform.rawValue),
                .text(push.deviceToken)
            ).execute()
            try RawStatement(
                db,
                """
                INSERT INTO push_outbox (wallet, platform, device_token, queued_at, next_attempt_at, badge, read_sync)
                VALUES (?, ?, ?, ?, ?, ?, 1)
                """, .address(wallet), .text(push.platform.rawValue), .text(push.deviceToken), .integer(signed.now),
                .integer(signed.now), .integer(Int64(push.unread))
            ).execute()
        }
    }
}

/// The reads the §10 operations and answers share.
enum SubscriberControlReads {
    /// A channel's list; nil for an unknown channel.
    static func settings(of channel: EthereumAddress, in db: Database) throws -> ChannelSettingsList? {
        let texts = try RawStatement(db, "SELECT settings FROM channels WHERE address = ?", .address(channel)).rows {
            $0.text(0)
        }
        guard let text = texts.first else { return nil }
        return try stored(text)
    }

    static func stored(_ text: String) throws -> ChannelSettingsList {
        do { return try ChannelSettingsList.stored(text) } catch {
            throw StoreError(.corrupt, "a channel's stored settings do not parse: \(error.message)")
        }
    }

    /// The channel's list when `subscriber` subscribes to it, and its choices.
    static func subscriberFacts(
        channel: EthereumAddress, subscriber: EthereumAddress, in db: Database
    ) throws -> SubscriberFacts {
        let texts = try RawStatement(
            db,
            """
            SELECT c.settings FROM subscriptions s JOIN channels c ON c.address = s.channel
            WHERE s.channel = ? AND s.subscriber = ?
            """, .address(channel), .address(subscriber)
        ).rows { $0.text(0) }
        guard let text = texts.first else { return SubscriberFacts(list: nil) }
        return SubscriberFacts(
            list: try stored(text), choices: try choices(channel: channel, subscriber: subscriber, in: db))
    }

    static func choices(
        channel: EthereumAddress, subscriber: EthereumAddress, in db: Database
    ) throws -> [String: Int64] {
        let rows = try RawStatement(
            db, "SELECT setting, value FROM subscriber_choices WHERE channel = ? AND subscriber = ?",
            .address(channel), .address(subscriber)
        ).rows { ($0.text(0), $0.integer(1)) }
        return Dictionary(rows, uniquingKeysWith: { _, last in last })
    }

    static func bindings(of wallet: EthereumAddress, in db: Database) throws -> [DeviceBindingRecord] {
        try RawStatement(
            db,
            "SELECT platform, device_token, created_at, last_seen FROM bindings WHERE wallet = ? ORDER BY created_at",
            .address(wallet)
        ).rows { row in
            guard let platform = Platform(rawValue: row.text(0)) else {
                throw StoreError(.corrupt, "unknown platform in bindings")
            }
            return DeviceBindingRecord(
                wallet: wallet, platform: platform, deviceToken: row.text(1), createdAt: row.integer(2),
                lastSeen: row.integer(3))
        }
    }
}
