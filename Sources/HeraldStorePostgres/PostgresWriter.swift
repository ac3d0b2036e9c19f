import HeraldCore
import HeraldStore
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Group commit on PostgreSQL: writes that arrive while a batch is being written wait and go into the
/// next one together, up to `maximumBatch` a transaction; every writer is answered only after its
/// transaction's COMMIT returned (with `synchronous_commit` on, the WAL is flushed by then).
///
/// Writes are spread over a few lanes by signer, each lane one transaction at a time on one pooled
/// connection. All writes of one signer go through one lane, so a node's lanes never wait on each
/// other's signer locks; across nodes, each batch takes its signers' locks in key order.
///
/// A batch whose transaction fails is not answered with its failure as a whole: a deadlock or
/// serialization failure (another node's batch) runs it again, and any other failure runs its writes
/// one transaction each, so that one bad write fails alone. A failed COMMIT is answered as a failure
/// to every write in it: whether it committed is unknown, and running it again could turn its
/// outcomes into `replayed`.
final class PostgresWriter: Sendable {
    /// Smaller than SQLite's 512: a batch's writes run one after another, a few round trips each, with
    /// its signers locked until COMMIT. 64 shares one WAL flush widely enough while keeping a batch to
    /// milliseconds and its advisory locks (shared memory on the server) few.
    static let maximumBatch = 64
    /// Times a batch is run again after a transient failure before it is split.
    static let transientRetries = 3

    private let client: PostgresClient
    private let logger: Logger
    let knownKeys: KnownWalletKeys
    private let lanes: [WriteLane]
    /// Broadcasts (type 1) have lanes of their own, as many, by channel: one to a million subscribers takes
    /// PostgreSQL tens of seconds, and the signers whose writes shared its lane would wait for it. A lane
    /// holds a pooled connection only while a batch runs.
    private let broadcastLanes: [WriteLane]
    /// Transactions, writes, busy time (summed over lanes) and waits, for `/metrics`.
    let statistics: WriterStatistics

    private let split = Atomic<Int>(0)
    private let batched = Atomic<Int>(0)

    /// Batches run again one write at a time after a failure that was not transient.
    var splitBatches: Int { split.load(ordering: .relaxed) }

    /// Registrations run through the batched statements (`PostgresRegistrationBatch.swift`), committed or not.
    var batchedRegistrations: Int { batched.load(ordering: .relaxed) }

    /// How long one batch's transaction may take, lease included, before its writes are answered
    /// `unavailable` (whether it committed is then unknown) and the lane goes on to the next batch.
    private let batchTimeout: Duration
    /// The same for a broadcast's batch, whose time grows with the channel's subscribers (25.6 s for a
    /// million on the machine of docs/benchmarks.md).
    static let broadcastTimeout: Duration = .seconds(600)

    init(
        client: PostgresClient, lanes: Int, knownKeys: KnownWalletKeys, batchTimeout: Duration = .seconds(10),
        logger: Logger
    ) {
        self.client = client
        self.batchTimeout = batchTimeout
        self.logger = logger
        self.knownKeys = knownKeys
        self.lanes = (0..<max(1, lanes)).map { _ in WriteLane() }
        broadcastLanes = (0..<max(1, lanes)).map { _ in WriteLane() }
        statistics = WriterStatistics(lanes: self.lanes.count)
    }

    /// Queues `write`; `answer` is resumed once its batch committed or failed.
    func submit(_ write: PostgresWrite, answer: OneAnswer<PostgresWriteOutcome>) {
        let choice = write.isBroadcast ? broadcastLanes : lanes
        let lane = choice[Int(UInt64(bitPattern: walletLockKey(write.signer)) % UInt64(choice.count))]
        lane.submit(write, answer: answer) { [self] batch in await commit(batch) }
    }

    /// Finishes every batch submitted, then refuses new writes.
    func close() async {
        for lane in lanes + broadcastLanes { await lane.close() }
    }

    private func commit(_ batch: [WriteLane.Pending]) async {
        var runs = 0
        while true {
            runs += 1
            do {
                let writes = batch.map(\.write)
                let timeout =
                    writes.contains(where: \.isBroadcast) ? max(batchTimeout, Self.broadcastTimeout) : batchTimeout
                // Bounded, so that a lease or a query that never ends (seen after a database restart:
                // the lane waited on it forever, every later write in it unanswered, and shutdown hung)
                // costs one batch, not the lane.
                let (outcomes, keys) = try await Deadline.race(
                    within: timeout,
                    late: {
                        BatchFailure.commitFailed(
                            StoreError(.unavailable, "no answer within \(timeout.components.seconds) s"))
                    }
                ) { [self] in try await run(writes) }
                // Only now, committed, do the keys count as stored.
                knownKeys.insert(keys)
                statistics.answered(submitted: batch.lazy.map(\.submitted))
                WaiterHome.deliver(
                    zip(batch, outcomes).map { pending, outcome in
                        (pending.home, { pending.answer.resume(returning: outcome) })
                    })
                return
            } catch BatchFailure.rolledBack(let error) {
                if PostgresErrors.isTransient(error) && runs <= Self.transientRetries {
                    logger.debug("write batch runs again", metadata: ["reason": "\(PostgresErrors.describe(error))"])
                    continue
                }
                // A write of its own can fail a batch; a database that does not answer fails them all alike,
                // and running them one by one would only wait for it once per write.
                if batch.count > 1 && PostgresErrors.code(error) != .unavailable {
                    split.add(1, ordering: .relaxed)
                    logger.warning(
                        "write batch failed; its writes run one by one",
                        metadata: ["writes": "\(batch.count)", "reason": "\(PostgresErrors.describe(error))"])
                    for pending in batch { await commit([pending]) }
                    return
                }
                fail(batch, error)
                return
            } catch {
                fail(batch, error)
                return
            }
        }
    }

    private func fail(_ batch: [WriteLane.Pending], _ error: any Error) {
        let failure: StoreError
        if case BatchFailure.commitFailed(let cause) = error {
            failure = PostgresErrors.storeError("write failed at COMMIT (it may or may not be stored): ", cause)
        } else if case BatchFailure.rolledBack(let cause) = error {
            failure = PostgresErrors.storeError("write failed: ", cause)
        } else {
            failure = PostgresErrors.storeError("write failed: ", error)
        }
        statistics.answered(submitted: batch.lazy.map(\.submitted))
        WaiterHome.deliver(batch.map { pending in (pending.home, { pending.answer.resume(throwing: failure) }) })
    }

    private enum BatchFailure: Error {
        /// Nothing of the batch is stored.
        case rolledBack(any Error)
        /// COMMIT was sent and failed: the outcome is unknown.
        case commitFailed(any Error)
    }

    /// One transaction for the whole batch.
    private func run(_ writes: [PostgresWrite]) async throws -> ([PostgresWriteOutcome], Set<EthereumAddress>) {
        let logger = self.logger
        let knownKeys = self.knownKeys
        let start = WriterStatistics.now()
        defer { statistics.busy(since: start) }
        return try await client.withConnection { connection in
            var sql = PostgresWriteSQL(connection: connection, logger: logger, knownKeys: knownKeys)
            var outcomes: [PostgresWriteOutcome] = []
            outcomes.reserveCapacity(writes.count)
            do {
                _ = try await connection.execute(BeginStatement(), logger: logger)
                var answered = [PostgresWriteOutcome?](repeating: nil, count: writes.count)
                // Registrations of wallets with no other write here share the two statements one takes
                // alone, the first of which takes the whole batch's locks; the rest run one by one, in order.
                let registrations = PostgresWriteSQL.batchableRegistrations(in: writes)
                if registrations.count >= 2 {
                    let changes = registrations.compactMap { index -> DeviceChange? in
                        if case .device(let change) = writes[index] { return change }
                        return nil
                    }
                    batched.add(changes.count, ordering: .relaxed)
                    let registered = try await sql.applyRegistrations(
                        changes, locking: PostgresWriteSQL.lockKeys(of: writes))
                    for (index, outcome) in zip(registrations, registered) {
                        answered[index] = .device(outcome)
                    }
                } else {
                    try await sql.lockSigners(of: writes)
                }
                for (index, write) in writes.enumerated() {
                    if let outcome = answered[index] {
                        outcomes.append(outcome)
                    } else {
                        outcomes.append(try await sql.apply(write))
                    }
                }
            } catch {
                // A dead connection has rolled back on the server's side already.
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw BatchFailure.rolledBack(error)
            }
            do {
                _ = try await connection.execute(CommitStatement(), logger: logger)
            } catch {
                throw BatchFailure.commitFailed(error)
            }
            statistics.committed(writes: writes.count)
            return (outcomes, sql.rememberedKeys)
        }
    }
}

/// A queue of writes and the one batch at a time that drains it.
final class WriteLane: Sendable {
    struct Pending: Sendable {
        let write: PostgresWrite
        let answer: OneAnswer<PostgresWriteOutcome>
        /// The event loop its caller waits on, answered there (`WaiterHome`).
        let home: (any EventLoop)?
        /// When it was submitted (`WriterStatistics.now()`).
        let submitted: UInt64
    }

    private struct State {
        var pending: [Pending] = []
        var draining = false
        var closed = false
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func submit(
        _ write: PostgresWrite, answer: OneAnswer<PostgresWriteOutcome>,
        commit: @escaping @Sendable ([Pending]) async -> Void
    ) {
        let pending = Pending(
            write: write, answer: answer, home: WaiterHome.current(), submitted: WriterStatistics.now())
        let start: Bool? = state.withLock { state in
            guard !state.closed else { return nil }
            state.pending.append(pending)
            if state.draining { return false }
            state.draining = true
            return true
        }
        switch start {
        case nil: answer.resume(throwing: StoreError.storeClosed)
        case true?: Task { await self.drain(commit) }
        case false?: break
        }
    }

    private func drain(_ commit: @Sendable ([Pending]) async -> Void) async {
        while true {
            let (batch, drained) = state.withLock { state -> ([Pending], [CheckedContinuation<Void, Never>]) in
                guard !state.pending.isEmpty else {
                    state.draining = false
                    defer { state.drained = [] }
                    return ([], state.drained)
                }
                let batch = Array(state.pending.prefix(PostgresWriter.maximumBatch))
                state.pending.removeFirst(batch.count)
                return (batch, [])
            }
            guard !batch.isEmpty else {
                for waiter in drained { waiter.resume() }
                return
            }
            await commit(batch)
        }
    }

    /// Refuses new writes and returns once those submitted are answered.
    func close() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state in
                state.closed = true
                if state.draining { state.drained.append(continuation) }
                return !state.draining
            }
            if idle { continuation.resume() }
        }
    }
}
