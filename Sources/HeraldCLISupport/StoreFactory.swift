package import HeraldStore
import HeraldStorePostgres
package import Logging

/// The one place that turns a `--database` value into a store, for `serve`, `channel` and the benches:
/// a `postgres://` (or `postgresql://`) URL selects PostgreSQL, anything else is a SQLite file.
package enum StoreFactory {
    package static func isPostgres(_ database: String) -> Bool {
        let lowered = database.lowercased()
        return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
    }

    /// Opens the store. A malformed URL is a usage error (exit 64); a database that cannot be reached or
    /// opened, or whose schema is newer than this herald's, exits 1 with one line naming it (a URL
    /// without its password).
    package static func open(
        _ database: String, poolSize: Int = 16, connectTimeoutSeconds: Int = 10,
        logger: Logger = Logger(label: "herald.store")
    ) async throws -> any HeraldStore {
        guard isPostgres(database) else {
            do {
                return try SQLiteHeraldStore(path: database, logger: logger)
            } catch {
                throw CLIError(.unexpected, "cannot open \(database): \(error)")
            }
        }
        do {
            _ = try PostgresURL(database)
        } catch {
            throw CLIError(.usage, "--database: \(error.description)")
        }
        do {
            return try await PostgresHeraldStore.open(
                url: database, poolSize: poolSize, connectTimeout: .seconds(connectTimeoutSeconds), logger: logger)
        } catch {
            throw CLIError(.unexpected, "\(error)")
        }
    }

    /// How the database is named in output and logs: a URL never shows its password.
    package static func describe(_ database: String) -> String {
        guard isPostgres(database) else { return database }
        return (try? PostgresURL(database))?.redacted ?? "a malformed postgres:// URL"
    }
}
