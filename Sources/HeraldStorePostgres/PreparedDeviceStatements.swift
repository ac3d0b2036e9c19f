import HeraldCore
import HeraldStore
import NIOCore
import PostgresNIO

// A device change's two statements as named prepared statements: each pooled connection parses and
// plans them once. Their texts never vary (the plan arrives as flags), so one prepared form serves
// every plan.

/// What a register reads under its signer's lock: the spent nonce's kept row, whether the binding
/// exists, how many the wallet holds.
struct BindingFactsStatement: PostgresPreparedStatement {
    static let name = "herald_binding_facts"
    static let sql = """
        SELECT n.digest IS NOT NULL, n.operation, n.answer,
               EXISTS (SELECT 1 FROM bindings WHERE wallet = $1 AND platform = $2 AND device_token = $3),
               (SELECT count(*) FROM bindings WHERE wallet = $1)
        FROM (SELECT 1) AS one LEFT JOIN nonces n ON n.digest = $4
        """

    struct Row {
        let kept: SpentNonce?
        let exists: Bool
        let walletBindings: Int64
    }

    let wallet: EthereumAddress
    let platform: Platform
    let deviceToken: String
    let digest: [UInt8]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(bytea(wallet))
        bindings.append(platform.rawValue)
        bindings.append(deviceToken)
        bindings.append(bytea(digest))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let columns = Columns(row)
        return Row(kept: try columns.spentNonce(0), exists: try columns.bool(3), walletBindings: try columns.int(4))
    }
}

/// The nonce spent, the change the plan chose made only if it was, the wallet's key remembered; answers
/// (nonces spent, rows changed).
struct DeviceChangeWriteStatement: PostgresPreparedStatement {
    static let name = "herald_device_change"
    static let sql = """
        WITH spent AS (
          INSERT INTO nonces (digest, retained_until, operation, answer)
          VALUES ($1, $2, $3, $4)
          ON CONFLICT (digest) DO NOTHING RETURNING 1),
        refreshed AS (
          UPDATE bindings SET last_seen = $5, p256dh = $6, auth = $7
          WHERE $8 AND wallet = $9 AND platform = $10 AND device_token = $11
            AND EXISTS (SELECT 1 FROM spent)
          RETURNING 1),
        created AS (
          INSERT INTO bindings (wallet, platform, device_token, created_at, last_seen, p256dh, auth)
          SELECT $9, $10, $11, $5, $5, $6, $7
          WHERE $12 AND EXISTS (SELECT 1 FROM spent)
          RETURNING 1),
        confirmed AS (
          INSERT INTO push_outbox (sid, wallet, platform, device_token, queued_at, next_attempt_at)
          SELECT NULL, $9, $10, $11, $5, $5
          FROM created WHERE $13 RETURNING 1),
        removed AS (
          DELETE FROM bindings
          WHERE $14 AND wallet = $9 AND platform = $10 AND device_token = $11
            AND EXISTS (SELECT 1 FROM spent)
          RETURNING 1),
        remembered AS (
          INSERT INTO wallet_keys (wallet, public_key, updated_at)
          SELECT $9, $15, $5 WHERE $16 AND EXISTS (SELECT 1 FROM spent)
          ON CONFLICT (wallet) DO NOTHING RETURNING 1)
        SELECT (SELECT count(*) FROM spent),
               (SELECT count(*) FROM refreshed) + (SELECT count(*) FROM created) + (SELECT count(*) FROM removed)
        """

    /// What the plan asks for, as the statement's flags.
    struct Flags {
        var refresh = false
        var create = false
        var confirm = false
        var remove = false
        var webPush: WebPushSubscription?
    }

    let change: DeviceChange
    let nonce: NonceSpend
    let answer: [UInt8]?
    let flags: Flags
    let needsKey: Bool

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 16)
        bindings.append(bytea(nonce.digest.bytes))
        bindings.append(nonce.retainedUntil)
        bindings.append(bytea(nonce.operation.bytes))
        bindings.append(answer.map(bytea))
        bindings.append(change.now)
        bindings.append(flags.webPush?.p256dh)
        bindings.append(flags.webPush?.auth)
        bindings.append(flags.refresh)
        bindings.append(bytea(change.wallet))
        bindings.append(change.platform.rawValue)
        bindings.append(change.deviceToken)
        bindings.append(flags.create)
        bindings.append(flags.confirm)
        bindings.append(flags.remove)
        bindings.append(bytea(change.publicKey.uncompressed))
        bindings.append(needsKey)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> (spent: Int64, changed: Int64) {
        let columns = Columns(row)
        return (try columns.int(0), try columns.int(1))
    }
}
