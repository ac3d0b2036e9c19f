public import HeraldStore
import HeraldStorePostgres
import HeraldStoreSQLite
public import Logging

/// The one place that turns a `--database` value into a store, for `serve`, `channel`, the benches and
/// the instruction-count workload: a `postgres://` (or `postgresql://`) URL selects PostgreSQL, anything
/// else is a SQLite file. Nothing else names a backend.
public enum StoreFactory {
    /// Why a store did not open.
    public enum OpenError: Error, Sendable, CustomStringConvertible {
        /// The value is not a usable URL (a usage error for the CLI).
        case malformed(String)
        /// The database could not be reached, locked or opened, or its schema is newer than this herald's.
        case unavailable(String)

        public var description: String {
            switch self {
            case .malformed(let reason), .unavailable(let reason): return reason
            }
        }
    }

    public static func isPostgres(_ database: String) -> Bool {
        let lowered = database.lowercased()
        return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
    }

    /// Opens the store. With `serving` (only `herald serve`), a SQLite file is locked for this process
    /// until the store closes; PostgreSQL is shared by its nodes by design. Errors name a URL without its
    /// password.
    public static func open(
        _ database: String, poolSize: Int = 16, connectTimeoutSeconds: Int = 10, serving: Bool = false,
        logger: Logger = Logger(label: "herald.store")
    ) async throws(OpenError) -> any HeraldStore {
        guard isPostgres(database) else {
            do {
                return try SQLiteHeraldStore(path: database, serving: serving, logger: logger)
            } catch let error as SQLiteServeLockError {
                throw .unavailable(error.description)
            } catch {
                throw .unavailable("cannot open \(database): \(error)")
            }
        }
        do {
            _ = try PostgresURL(database)
        } catch {
            throw .malformed("--database: \(error.description)")
        }
        do {
            return try await PostgresHeraldStore.open(
                url: database, poolSize: poolSize, connectTimeout: .seconds(connectTimeoutSeconds), logger: logger)
        } catch {
            throw .unavailable("\(error)")
        }
    }

    /// How the database is named in output and logs: a URL never shows its password.
    public static func describe(_ database: String) -> String {
        guard isPostgres(database) else { return database }
        return (try? PostgresURL(database))?.redacted ?? "a malformed postgres:// URL"
    }
}
