/// What a benchmark reads from the server's `/metrics` before and after its load: the process's CPU
/// and the store writer's counters, turned into figures per request and per second of the run.
struct ServerFigures {
    static let cpu = "process_cpu_seconds_total"
    static let transactions = "herald_store_transactions_total"
    static let writes = "herald_store_writes_total"
    static let busy = "herald_store_busy_seconds_total"
    static let wait = "herald_store_wait_seconds_total"
    static let lanes = "herald_store_writer_lanes"
    static let series: Set<String> = [cpu, transactions, writes, busy, wait, lanes]

    /// The store writer over the run.
    struct StoreWriter: Encodable, Equatable {
        /// Writes per committed transaction: the group commit's batch size.
        let writesPerTransaction: Double
        /// The share of the run the writer spent in transactions, per lane.
        let busyShare: Double
        /// The mean time a write waited from submission to its answer.
        let commitWaitMilliseconds: Double
    }

    let cpuMicrosecondsPerRequest: Double?
    let storeWriter: StoreWriter?

    /// nil figures where the server does not publish a series (an older server, no procfs) or the run
    /// completed no request or wrote nothing.
    init(before: [String: Double], after: [String: Double], requests: Int, seconds: Double) {
        func delta(_ name: String) -> Double? {
            guard let first = before[name], let last = after[name] else { return nil }
            return last - first
        }
        if let cpu = delta(Self.cpu), requests > 0 {
            cpuMicrosecondsPerRequest = cpu * 1e6 / Double(requests)
        } else {
            cpuMicrosecondsPerRequest = nil
        }
        if let transactions = delta(Self.transactions), let writes = delta(Self.writes), let busy = delta(Self.busy),
            let wait = delta(Self.wait), transactions > 0, writes > 0, seconds > 0
        {
            storeWriter = StoreWriter(
                writesPerTransaction: writes / transactions, busyShare: busy / seconds / max(1, after[Self.lanes] ?? 1),
                commitWaitMilliseconds: wait / writes * 1000)
        } else {
            storeWriter = nil
        }
    }
}
