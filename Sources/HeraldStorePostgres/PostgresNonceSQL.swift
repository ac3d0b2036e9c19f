import HeraldCore
import HeraldStore
import PostgresNIO

/// One operation's nonce in its batch's transaction (docs/protocol.md §2.3 step 4, §11.2): the key on the
/// digest judges, on every node. A node whose insert meets another node's uncommitted spend of the same
/// nonce waits for that commit; then it reads the first answer (a new statement, so it sees the commit).
extension PostgresWriteSQL {
    /// Spends the nonce with the operation's digest and, when the plan already tells it, its answer; false
    /// when it was spent already (by this node or any other).
    func spend(_ nonce: NonceSpend, answer: [UInt8]?) async throws -> Bool {
        let inserted = try await connection.query(
            """
            WITH inserted AS (
              INSERT INTO nonces (digest, retained_until, operation, answer)
              VALUES (\(bytea(nonce.digest.bytes)), \(nonce.retainedUntil), \(bytea(nonce.operation.bytes)),
                      \(answer.map(bytea)))
              ON CONFLICT (digest) DO NOTHING RETURNING 1)
            SELECT count(*) FROM inserted
            """, logger: logger
        ).integer()
        return inserted > 0
    }

    /// Keeps the answer of an operation whose writes decided it, in their transaction.
    func keep(_ answer: [UInt8]?, for nonce: NonceSpend) async throws {
        try await run(
            "UPDATE nonces SET answer = \(answer.map(bytea)) WHERE digest = \(bytea(nonce.digest.bytes))")
    }

    /// What a request whose nonce is spent answers (`IdempotencyPlanner` decides from the kept row).
    func answer<Outcome: ReplayableOutcome>(
        for nonce: NonceSpend, decode: ([UInt8]) throws -> Outcome
    ) async throws -> Outcome {
        try IdempotencyPlanner.answer(try await stored(nonce), for: nonce.operation, decode: decode)
    }

    /// The kept row of a nonce; nil when it is not spent.
    func stored(_ nonce: NonceSpend) async throws -> SpentNonce? {
        try await connection.query(
            "SELECT true, operation, answer FROM nonces WHERE digest = \(bytea(nonce.digest.bytes))", logger: logger
        ).rows { try $0.spentNonce(0) }.first ?? nil
    }
}

extension Columns {
    /// Three columns from `index`: whether the nonce's row exists (`n.digest IS NOT NULL` of a LEFT JOIN),
    /// its operation and its answer; nil when it does not.
    func spentNonce(_ index: Int) throws -> SpentNonce? {
        guard try bool(index) else { return nil }
        return SpentNonce(operation: try optionalBytes(index + 1), answer: try optionalBytes(index + 2))
    }
}
