import Foundation
import HeraldStore

/// The store writer's counters (``WriterStatistics``) in Prometheus text format, read at each scrape:
/// they live in the store, which counts them on its writer's thread without any metrics library.
enum StoreWriterMetrics {
    static func exposition(_ snapshot: WriterStatistics.Snapshot) -> String {
        """
        # HELP herald_store_transactions_total Write transactions committed (a group commit is one).
        # TYPE herald_store_transactions_total counter
        herald_store_transactions_total \(snapshot.transactions)
        # HELP herald_store_writes_total Writes carried by committed transactions.
        # TYPE herald_store_writes_total counter
        herald_store_writes_total \(snapshot.writes)
        # HELP herald_store_busy_seconds_total Time the writer spent in write transactions.
        # TYPE herald_store_busy_seconds_total counter
        herald_store_busy_seconds_total \(String(format: "%.6f", snapshot.busySeconds))
        # HELP herald_store_wait_seconds_total Time writes waited from submission to their answer, summed.
        # TYPE herald_store_wait_seconds_total counter
        herald_store_wait_seconds_total \(String(format: "%.6f", snapshot.waitSeconds))
        # HELP herald_store_writer_lanes Transactions the writer can have open at once (SQLite 1).
        # TYPE herald_store_writer_lanes gauge
        herald_store_writer_lanes \(snapshot.lanes)

        """
    }
}
