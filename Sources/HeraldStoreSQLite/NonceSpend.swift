import GRDB
import HeraldCore
import HeraldStore

/// SQLite's statements for one operation's nonce, inside the batch's transaction.
extension NonceSpend {
    /// Memory's early word: spent by a committed batch or earlier in this one. Memory may only answer
    /// "spent"; the key in `nonces` decides what is fresh (``spend(answer:in:batch:)``).
    func isSpent(batch: DeviceChangeSQL.BatchNonces, ledger: NonceLedger) -> Bool {
        batch.contains(digest) || ledger.contains(digest)
    }

    /// Spends the nonce: false when the digest is in the `nonces` key already (a process whose spend this
    /// one's memory has not seen), and the operation is then answered by ``answer(in:decode:)``. `answer`
    /// is the operation's, when it is known before its writes; else ``keep(_:in:)`` writes it after them.
    func spend(answer: [UInt8]?, in db: Database, batch: inout DeviceChangeSQL.BatchNonces) throws -> Bool {
        let spend = try RawStatement(
            db,
            """
            INSERT INTO nonces (digest, retained_until, operation, answer) VALUES (?, ?, ?, ?)
            ON CONFLICT (digest) DO NOTHING
            """)
        spend.bind(1, digest.bytes)
        spend.bind(2, retainedUntil)
        spend.bind(3, operation.bytes)
        spend.bind(4, blobOrNull: answer)
        try spend.execute()
        guard spend.changes > 0 else { return false }
        batch.add(digest, retainedUntil)
        return true
    }

    /// Keeps the answer of an operation whose outcome its writes decided, in their transaction.
    func keep(_ answer: [UInt8]?, in db: Database) throws {
        try RawStatement(db, "UPDATE nonces SET answer = ? WHERE digest = ?", .blobOrNull(answer), .blob(digest.bytes))
            .execute()
    }

    /// What a request whose nonce is spent answers: the first answer if it is the same operation
    /// (`IdempotencyPlanner` decides), read in this transaction, so a copy in the same batch as the
    /// first sees its answer.
    func answer<Outcome: ReplayableOutcome>(
        in db: Database, decode: ([UInt8]) throws -> Outcome
    ) throws -> Outcome {
        try IdempotencyPlanner.answer(try stored(in: db), for: operation, decode: decode)
    }

    /// What `nonces` holds for this nonce; nil when it is not spent (or its row was pruned).
    func stored(in db: Database) throws -> SpentNonce? {
        try RawStatement(db, "SELECT operation, answer FROM nonces WHERE digest = ?", .blob(digest.bytes))
            .rows { SpentNonce(operation: $0.optionalBlob(0), answer: $0.optionalBlob(1)) }.first
    }
}
