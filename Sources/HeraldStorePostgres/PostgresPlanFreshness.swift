import Logging
import PostgresNIO

/// Keeps the statistics of Herald's tables, and so the plans of its prepared statements, in step with
/// the tables while they are young.
///
/// After five executions PostgreSQL plans a named prepared statement once for any parameters and keeps
/// that plan until the statistics of a table it reads change. On a new database that plan is made while
/// the tables are nearly empty, where reading a whole table beats an index, and autovacuum analyzes a
/// table at most once a minute (`autovacuum_naptime`): meanwhile a registration batch's facts scanned
/// the whole of `nonces` (8.8 ms a batch at 17,000 rows, against 0.22 ms once analyzed), and the claims
/// and outcome groups the whole outbox. Every `interval` this analyzes the tables that hold twice the rows
/// their statistics say (1,000 at least): each doubling of a young table, so a handful of times in a
/// database's life; autovacuum keeps the grown ones current. Growth, not churn: the outbox's updates
/// change its rows many times over without making its plans wrong.
struct PostgresPlanFreshness: Sendable {
    static let interval = Duration.seconds(2)
    static let minimumRows = 1_000

    let client: PostgresClient
    let logger: Logger

    /// Runs until cancelled (the store's graceful shutdown); a failed round is logged and tried again.
    func run() async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: Self.interval)
                try await analyzeGrownTables()
            } catch is CancellationError {
                return
            } catch {
                logger.warning("could not bring table statistics up to date: \(PostgresErrors.describe(error))")
            }
        }
    }

    /// Analyzes every table of Herald's schema that holds twice the rows its statistics say; answers their
    /// names. Only the tables this role owns (PostgreSQL would skip the others with a warning, every round);
    /// `SKIP_LOCKED`: a table another node or autovacuum is analyzing is left to it.
    @discardableResult
    func analyzeGrownTables() async throws -> [String] {
        // The command comes from the catalog, the name quoted by PostgreSQL's own `format('%I')`.
        let grown = try await client.query(
            """
            SELECT s.relname, s.n_live_tup, greatest(c.reltuples, 0)::bigint,
                   format('ANALYZE (SKIP_LOCKED) %I', s.relname)
            FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
            WHERE s.schemaname = current_schema() AND pg_has_role(c.relowner, 'USAGE')
              AND s.n_live_tup >= greatest(\(Int64(Self.minimumRows)), 2 * c.reltuples)
            ORDER BY s.relname
            """, logger: logger
        ).rows { (table: try $0.text(0), rows: try $0.int(1), known: try $0.int(2), analyze: try $0.text(3)) }
        for table in grown {
            _ = try await client.query(PostgresQuery(unsafeSQL: table.analyze), logger: logger).rows { _ in () }
            logger.info("analyzed \(table.table): about \(table.rows) rows, its statistics said \(table.known)")
        }
        return grown.map(\.table)
    }
}
