import HeraldServer
package import HeraldStore
package import Logging

/// A store for a command, its failures as the CLI's exit codes (CLI.md): a malformed URL is a usage error
/// (exit 64); a database that cannot be reached, locked or opened, or whose schema is newer than this
/// herald's, exits 1 with one line naming it (a URL without its password).
package enum CommandStore {
    package static func open(
        _ database: String, poolSize: Int = 16, connectTimeoutSeconds: Int = 10, serving: Bool = false,
        logger: Logger = Logger(label: "herald.store")
    ) async throws -> any HeraldStore {
        do {
            return try await StoreFactory.open(
                database, poolSize: poolSize, connectTimeoutSeconds: connectTimeoutSeconds, serving: serving,
                logger: logger)
        } catch .malformed(let reason) {
            throw CLIError(.usage, reason)
        } catch .unavailable(let reason) {
            throw CLIError(.unexpected, reason)
        }
    }
}
