import HeraldStore
import Logging
import PostgresNIO

/// Brings a database's schema up to `PostgresMigrations.latest`, once, however many nodes start at
/// the same moment: each takes a session advisory lock first, so the second finds the work done.
/// Each migration and its `schema_migrations` row commit in one transaction (PostgreSQL's DDL is
/// transactional), so a crash leaves a database at one version or the next, never between.
enum PostgresMigrator {
    /// The advisory lock of schema changes (two-key form, so it never meets a wallet's one-key lock):
    /// "HRLD" and 1.
    static let lockKeys: (Int32, Int32) = (0x4852_4C44, 1)

    static func migrate(_ client: PostgresClient, url: PostgresURL, logger: Logger) async throws {
        do {
            try await client.withConnection { connection in
                try await connection.query(
                    "SELECT pg_advisory_lock(\(lockKeys.0), \(lockKeys.1))", logger: logger)
                do {
                    try await migrateLocked(connection, logger: logger)
                } catch {
                    _ = try? await connection.query(
                        "SELECT pg_advisory_unlock(\(lockKeys.0), \(lockKeys.1))", logger: logger)
                    throw error
                }
                try await connection.query("SELECT pg_advisory_unlock(\(lockKeys.0), \(lockKeys.1))", logger: logger)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError("cannot migrate the schema at \(url): \(PostgresErrors.describe(error))")
        }
    }

    /// The schema version of the database (0 when it has none yet).
    static func version(_ connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query(
            "SELECT coalesce(max(version), 0) FROM schema_migrations", logger: logger
        ).rows { try $0.int(0) }
        return Int(rows.first ?? 0)
    }

    private static func migrateLocked(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
              version    integer     PRIMARY KEY,
              name       text        NOT NULL,
              applied_at timestamptz NOT NULL DEFAULT now()
            )
            """, logger: logger)
        let current = try await version(connection, logger: logger)
        let latest = PostgresMigrations.latest
        guard current <= latest else {
            throw StoreError(
                "the database schema is version \(current), newer than this herald (\(latest)): upgrade herald")
        }
        for migration in PostgresMigrations.all where migration.version > current {
            try await connection.query("BEGIN", logger: logger)
            do {
                for statement in statements(of: migration.sql) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    """
                    INSERT INTO schema_migrations (version, name)
                    VALUES (\(Int32(migration.version)), \(migration.name))
                    """,
                    logger: logger)
                try await connection.query("COMMIT", logger: logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw StoreError("migration \(migration.name) failed: \(PostgresErrors.describe(error))")
            }
            logger.notice("PostgreSQL schema migrated", metadata: ["version": "\(migration.version)"])
        }
    }

    /// A migration's statements, one at a time (the extended protocol runs one per query). A statement
    /// ends with a line ending in `;` that is not a comment, outside a function's body (between `$$`s).
    static func statements(of sql: String) -> [String] {
        var statements: [String] = []
        var current: [Substring] = []
        var inBody = false
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            current.append(line)
            if isCode(line) && line.split(separator: "$$", omittingEmptySubsequences: false).count.isMultiple(of: 2) {
                inBody.toggle()
            }
            if !inBody && isCode(line) && line.last(where: { !$0.isWhitespace }) == ";" {
                statements.append(current.joined(separator: "\n"))
                current = []
            }
        }
        if current.contains(where: isCode) { statements.append(current.joined(separator: "\n")) }
        return statements
    }

    /// A line with SQL on it: not blank, not a comment.
    private static func isCode(_ line: Substring) -> Bool {
        let text = line.drop(while: \.isWhitespace)
        return !text.isEmpty && !text.hasPrefix("--")
    }
}
