import HeraldCore
import HeraldStore
import PostgresNIO

/// An unregister as one named prepared statement: the nonce spent, the binding removed only if it was,
/// the wallet's key remembered; answers (nonces spent, bindings removed). Registrations have their own
/// statements (`PostgresRegistrationBatch.swift`).
struct UnregisterStatement: PostgresPreparedStatement {
    static let name = "herald_unregister"
    static let sql = """
        WITH spent AS (
          INSERT INTO nonces (digest, retained_until, operation)
          VALUES ($1, $2, $3)
          ON CONFLICT (digest) DO NOTHING RETURNING 1),
        removed AS (
          DELETE FROM bindings
          WHERE wallet = $4 AND platform = $5 AND device_token = $6 AND EXISTS (SELECT 1 FROM spent)
          RETURNING 1),
        remembered AS (
          INSERT INTO wallet_keys (wallet, public_key, updated_at)
          SELECT $4, $7, $8 WHERE $9 AND EXISTS (SELECT 1 FROM spent)
          ON CONFLICT (wallet) DO NOTHING RETURNING 1)
        SELECT (SELECT count(*) FROM spent), (SELECT count(*) FROM removed)
        """

    let change: DeviceChange
    let nonce: NonceSpend
    let needsKey: Bool

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 9)
        bindings.append(bytea(nonce.digest.bytes))
        bindings.append(nonce.retainedUntil)
        bindings.append(bytea(nonce.operation.bytes))
        bindings.append(bytea(change.wallet))
        bindings.append(change.platform.rawValue)
        bindings.append(change.deviceToken)
        bindings.append(bytea(change.publicKey.uncompressed))
        bindings.append(change.now)
        bindings.append(needsKey)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> (spent: Int64, removed: Int64) {
        let columns = Columns(row)
        return (try columns.int(0), try columns.int(1))
    }
}
