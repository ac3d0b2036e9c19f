import Dispatch
import Synchronization

/// What a store's group-commit writer has done since the store opened, for `/metrics`: how many
/// transactions it committed and how many writes they carried (their ratio is the batch size), how
/// long it spent in transactions (per second of wall time, how busy it is: SQLite has one writer, so
/// near 1 it is saturated, and a node needs PostgreSQL to grow), and how long writes waited from
/// submission to their answer (the commit wait of every registration, subscription and notification).
public final class WriterStatistics: Sendable {
    /// The counters at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// Write transactions committed (a group commit is one, however many writes it carries).
        public var transactions: Int
        /// Writes carried by those transactions.
        public var writes: Int
        /// Time spent in write transactions, committed or not, summed over the writer's lanes.
        public var busySeconds: Double
        /// Time writes waited from submission to their answer, summed over writes (committed or not).
        public var waitSeconds: Double
        /// Transactions the writer can have open at once (SQLite 1; PostgreSQL its lanes): busy time per
        /// second of wall time, divided by this, is how saturated it is.
        public var lanes: Int

        public init(transactions: Int, writes: Int, busySeconds: Double, waitSeconds: Double, lanes: Int) {
            self.transactions = transactions
            self.writes = writes
            self.busySeconds = busySeconds
            self.waitSeconds = waitSeconds
            self.lanes = lanes
        }
    }

    private let lanes: Int

    private let transactions = Atomic<Int>(0)
    private let writes = Atomic<Int>(0)
    private let busyNanoseconds = Atomic<UInt64>(0)
    private let waitNanoseconds = Atomic<UInt64>(0)

    public init(lanes: Int) { self.lanes = lanes }

    /// A monotonic instant in nanoseconds, for the durations this records.
    public static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// A transaction that committed `writes` writes.
    public func committed(writes count: Int) {
        transactions.add(1, ordering: .relaxed)
        writes.add(count, ordering: .relaxed)
    }

    /// Time in a transaction (or in log maintenance that holds transactions up), from `start` to now.
    public func busy(since start: UInt64) {
        busyNanoseconds.add(Self.span(from: start, to: Self.now()), ordering: .relaxed)
    }

    /// Writes answered now, each submitted at one of `submitted`.
    public func answered(submitted: some Sequence<UInt64>) {
        let now = Self.now()
        var total: UInt64 = 0
        for start in submitted { total &+= Self.span(from: start, to: now) }
        waitNanoseconds.add(total, ordering: .relaxed)
    }

    public func snapshot() -> Snapshot {
        Snapshot(
            transactions: transactions.load(ordering: .relaxed), writes: writes.load(ordering: .relaxed),
            busySeconds: Double(busyNanoseconds.load(ordering: .relaxed)) / 1e9,
            waitSeconds: Double(waitNanoseconds.load(ordering: .relaxed)) / 1e9, lanes: lanes)
    }

    private static func span(from start: UInt64, to end: UInt64) -> UInt64 {
        end >= start ? end - start : 0
    }
}
