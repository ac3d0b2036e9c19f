import HeraldCore
import HeraldStore
import PostgresNIO

/// Registrations in two round trips however many: a batch's registrations of distinct wallets together, or
/// one alone. One prepared statement takes the batch's locks and reads every one's facts (array parameters),
/// `DeviceChangePlanner` decides each as it would alone, and one more writes every plan (nonces with their
/// answers, bindings, setup confirmations, keys). Distinct wallets keep each registration's facts its own:
/// nothing one of them writes changes what another read. A nonce another node spent meanwhile (its insert
/// waited for that commit) is answered from its kept row, as alone.
extension PostgresWriteSQL {
    /// Registrations that may share the batched statements: a batch's `register` changes whose signer has
    /// no other write in the batch. Their positions in `writes`.
    static func batchableRegistrations(in writes: [PostgresWrite]) -> [Int] {
        var writesBySigner: [EthereumAddress: Int] = [:]
        for write in writes { writesBySigner[write.signer, default: 0] += 1 }
        return writes.indices.filter { index in
            guard case .device(let change) = writes[index], change.action == .register else { return false }
            return writesBySigner[change.wallet] == 1
        }
    }

    /// `lockKeys`: the batch's advisory locks, taken before the facts are read; none when they are held.
    mutating func applyRegistrations(
        _ changes: [DeviceChange], locking lockKeys: [Int64] = []
    ) async throws -> [DeviceChangeOutcome] {
        let nonces = changes.map {
            NonceSpend(
                signer: $0.wallet, nonce: $0.nonce, operation: $0.operation, retainedUntil: $0.nonceRetainedUntil)
        }
        let facts = try await connection.execute(
            RegistrationFactsStatement(lockKeys: lockKeys, changes: changes, digests: nonces.map(\.digest.bytes)),
            logger: logger
        ).collected()
        guard facts.count == changes.count else {
            throw StoreError("the batched binding facts returned \(facts.count) rows for \(changes.count)")
        }
        var outcomes = [DeviceChangeOutcome?](repeating: nil, count: changes.count)
        var planned: [RegistrationWriteStatement.Planned] = []
        for (index, row) in facts.enumerated() {
            let change = changes[index]
            if let kept = row.kept {
                outcomes[index] = try IdempotencyPlanner.answer(
                    kept, for: change.operation, decode: StoredAnswer.device)
                continue
            }
            let plan = DeviceChangePlanner.plan(
                change, facts: BindingFacts(exists: row.exists, walletBindings: Int(row.walletBindings)))
            guard let known = plan.knownOutcome, plan != .refuseOverLimit else {
                outcomes[index] = .overLimit
                continue
            }
            let needsKey = !rememberedKeys.contains(change.wallet) && !knownKeys.contains(change.wallet)
            planned.append(
                RegistrationWriteStatement.Planned(
                    position: index, change: change, nonce: nonces[index], answer: StoredAnswer.encode(known),
                    flags: Self.flags(for: plan), needsKey: needsKey, outcome: known))
        }
        if !planned.isEmpty {
            let spent = Set(
                try await connection.execute(RegistrationWriteStatement(planned: planned), logger: logger).collected())
            for entry in planned {
                if spent.contains(entry.position) {
                    if entry.needsKey { rememberedKeys.insert(entry.change.wallet) }
                    outcomes[entry.position] = entry.outcome
                } else {
                    // Another node's transaction spent this nonce meanwhile: its first answer, or replayed.
                    outcomes[entry.position] = try await answer(for: entry.nonce, decode: StoredAnswer.device)
                }
            }
        }
        return try outcomes.map { outcome in
            guard let outcome else { throw StoreError("a batched registration was left without an outcome") }
            return outcome
        }
    }
}

/// Takes the advisory locks `lockKeys` (none when the batch holds them already) and reads every
/// registration's facts, in one round trip: the spent nonce's kept row, whether the binding exists, how many
/// the wallet holds, in the order given. Migration 0014's function: in a VOLATILE function the facts' query
/// takes its snapshot once the locks are held, so it sees every transaction that held one of them before,
/// as a statement after a separate lock statement did (the binding limit across nodes).
struct RegistrationFactsStatement: PostgresPreparedStatement {
    static let name = "herald_registration_facts_locked"
    static let sql = "SELECT * FROM herald_registration_facts($1, $2, $3, $4, $5)"

    let lockKeys: [Int64]
    let changes: [DeviceChange]
    let digests: [[UInt8]]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(lockKeys)
        bindings.append(changes.map { bytea($0.wallet) })
        bindings.append(changes.map(\.platform.rawValue))
        bindings.append(changes.map(\.deviceToken))
        bindings.append(digests.map(bytea))
        return bindings
    }

    struct Row {
        let kept: SpentNonce?
        let exists: Bool
        let walletBindings: Int64
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let columns = Columns(row)
        return Row(kept: try columns.spentNonce(0), exists: try columns.bool(3), walletBindings: try columns.int(4))
    }
}

/// Every planned registration written at once; answers the positions whose nonce this statement spent. Its
/// data-modifying parts run whether or not the final SELECT reads them.
struct RegistrationWriteStatement: PostgresPreparedStatement {
    static let name = "herald_registration_write"
    static let sql = """
        WITH r AS (
          SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bigint[], $4::bytea[], $5::bytea[], $6::bigint[],
                               $7::text[], $8::text[], $9::boolean[], $10::bytea[], $11::text[], $12::text[],
                               $13::boolean[], $14::boolean[], $15::bytea[], $16::boolean[])
            AS r(position, digest, retained_until, operation, answer, now, p256dh, auth, refresh, wallet, platform,
                 token, create_binding, confirm, public_key, needs_key)),
        spent AS (
          INSERT INTO nonces (digest, retained_until, operation, answer)
          SELECT digest, retained_until, operation, NULLIF(answer, ''::bytea) FROM r ORDER BY position
          ON CONFLICT (digest) DO NOTHING RETURNING digest),
        ok AS (SELECT r.* FROM r JOIN spent ON spent.digest = r.digest),
        refreshed AS (
          UPDATE bindings b SET last_seen = ok.now, p256dh = NULLIF(ok.p256dh, ''), auth = NULLIF(ok.auth, '') FROM ok
          WHERE ok.refresh AND b.wallet = ok.wallet AND b.platform = ok.platform AND b.device_token = ok.token
          RETURNING 1),
        created AS (
          INSERT INTO bindings (wallet, platform, device_token, created_at, last_seen, p256dh, auth)
          SELECT wallet, platform, token, now, now, NULLIF(p256dh, ''), NULLIF(auth, '') FROM ok
          WHERE create_binding ORDER BY position
          RETURNING wallet),
        confirmed AS (
          INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
          SELECT NULL, ok.wallet, ok.platform, ok.token, ok.now, ok.now
          FROM ok JOIN created c ON c.wallet = ok.wallet WHERE ok.confirm ORDER BY ok.position RETURNING 1),
        remembered AS (
          INSERT INTO wallet_keys (wallet, public_key, updated_at)
          SELECT wallet, public_key, now FROM ok WHERE needs_key ORDER BY position
          ON CONFLICT (wallet) DO NOTHING RETURNING 1)
        SELECT position FROM ok
        """

    /// What the plan asks for.
    struct Flags: Sendable {
        var refresh = false
        var create = false
        var confirm = false
        var webPush: WebPushSubscription?
    }

    struct Planned: Sendable {
        let position: Int
        let change: DeviceChange
        let nonce: NonceSpend
        let answer: [UInt8]?
        let flags: Flags
        let needsKey: Bool
        let outcome: DeviceChangeOutcome
    }

    let planned: [Planned]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 16)
        bindings.append(planned.map { Int64($0.position) })
        bindings.append(planned.map { bytea($0.nonce.digest.bytes) })
        bindings.append(planned.map(\.nonce.retainedUntil))
        bindings.append(planned.map { bytea($0.nonce.operation.bytes) })
        bindings.append(planned.map { bytea($0.answer ?? []) })
        bindings.append(planned.map(\.change.now))
        // Arrays cannot hold NULL here: no Web Push keys travel as "" (a real key is never empty).
        bindings.append(planned.map { $0.flags.webPush?.p256dh ?? "" })
        bindings.append(planned.map { $0.flags.webPush?.auth ?? "" })
        bindings.append(planned.map(\.flags.refresh))
        bindings.append(planned.map { bytea($0.change.wallet) })
        bindings.append(planned.map(\.change.platform.rawValue))
        bindings.append(planned.map(\.change.deviceToken))
        bindings.append(planned.map(\.flags.create))
        bindings.append(planned.map(\.flags.confirm))
        bindings.append(planned.map { bytea($0.change.publicKey.uncompressed) })
        bindings.append(planned.map(\.needsKey))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int { Int(try Columns(row).int(0)) }
}
