import HeraldStore
import Logging
import PostgresNIO

/// The TLS settings of an `sslmode`, for the pool and for a single connection.
struct PostgresTLS {
    let client: PostgresClient.Configuration.TLS
    let connection: PostgresConnection.Configuration.TLS

    init(_ mode: PostgresURL.SSLMode) throws {
        var unverified = TLSConfiguration.makeClientConfiguration()
        // prefer and require encrypt without checking who answers, as libpq does; verify-full checks.
        unverified.certificateVerification = .none
        let verified = TLSConfiguration.makeClientConfiguration()
        do {
            switch mode {
            case .disable:
                client = .disable
                connection = .disable
            case .prefer:
                client = .prefer(unverified)
                connection = .prefer(try NIOSSLContext(configuration: unverified))
            case .require:
                client = .require(unverified)
                connection = .require(try NIOSSLContext(configuration: unverified))
            case .verifyFull:
                client = .require(verified)
                connection = .require(try NIOSSLContext(configuration: verified))
            }
        } catch {
            throw StoreError("cannot set up TLS for PostgreSQL: \(error)")
        }
    }
}

/// Waiting for the server at start, with errors that say why it cannot be used.
enum PostgresProbe {
    /// Connects once, on a connection of its own, until the server answers or `deadline` passes: the
    /// pool retries in silence, while this tells a refused password or a missing database at once.
    static func waitForServer(
        _ url: PostgresURL, tls: PostgresTLS, until deadline: ContinuousClock.Instant, logger: Logger
    ) async throws {
        var settings = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: tls.connection)
        let remaining = deadline - ContinuousClock.now
        let (seconds, attoseconds) = remaining.components
        settings.options.connectTimeout = .nanoseconds(
            max(100_000_000, seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
        let configuration = settings
        var lastError: (any Error)?
        while ContinuousClock.now < deadline {
            do {
                try await withDeadline(deadline) {
                    let connection = try await PostgresConnection.connect(
                        configuration: configuration, id: 1, logger: logger)
                    do {
                        try await connection.query("SELECT 1", logger: logger)
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                    try await connection.close()
                }
                return
            } catch is DeadlinePassed {
                break
            } catch {
                lastError = error
                if isRefusal(error) {
                    throw StoreError("PostgreSQL at \(url) refused: \(PostgresErrors.describe(error))")
                }
                logger.debug("PostgreSQL not answering yet", metadata: ["reason": "\(PostgresErrors.describe(error))"])
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        let reason = lastError.map { ": " + PostgresErrors.describe($0) } ?? ""
        throw StoreError("no answer from PostgreSQL at \(url) in time\(reason)")
    }

    /// Whether the server answered in a way it will go on answering: a server error (a bad password, no
    /// such database) other than starting, shutting down or full; no TLS where sslmode requires it; an
    /// authentication method the client cannot do. Anything else (refused or dropped connections,
    /// timeouts) is waited out until the deadline.
    static func isRefusal(_ error: any Error) -> Bool {
        if let state = PostgresErrors.sqlState(error) { return !["57P03", "57P01", "53300"].contains(state) }
        guard let error = error as? PSQLError else { return false }
        return [.sslUnsupported, .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError]
            .contains(error.code)
    }

    /// The pool answers `SELECT 1` before `deadline`.
    static func answer(_ client: PostgresClient, url: PostgresURL, until deadline: ContinuousClock.Instant) async throws
    {
        do {
            _ = try await withDeadline(deadline) { try await client.query("SELECT 1").rows { _ in () } }
        } catch is DeadlinePassed {
            throw StoreError("no answer from PostgreSQL at \(url) in time (through the pool)")
        } catch {
            throw StoreError("PostgreSQL at \(url): \(PostgresErrors.describe(error))")
        }
    }

    /// Refuses a database whose commits are acknowledged before they are durable: every write Herald
    /// acknowledges must survive a crash of the database server.
    static func checkDurability(_ client: PostgresClient, url: PostgresURL) async throws {
        let setting: String?
        do {
            setting = try await client.query("SELECT current_setting('synchronous_commit')").rows { try $0.text(0) }
                .first
        } catch {
            throw StoreError("PostgreSQL at \(url): \(PostgresErrors.describe(error))")
        }
        if setting == "off" {
            throw StoreError(
                "PostgreSQL at \(url) has synchronous_commit off: acknowledged writes could be lost in a crash; "
                    + "turn it on")
        }
    }

    struct DeadlinePassed: Error {}

    /// Runs `work`, cancelled when `deadline` passes (then `DeadlinePassed` is thrown).
    static func withDeadline<T: Sendable>(
        _ deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw DeadlinePassed() }
            return value
        }
    }
}
