import HeraldStore
import Logging

/// Runs a storage call; a failure is logged with its cause and answered `500 internal` without it.
enum StoreCall {
    static func run<T: Sendable>(_ context: HeraldRequestContext, _ body: () async throws -> T) async throws -> T {
        try await run(logger: context.logger, body)
    }

    static func run<T: Sendable>(logger: Logger, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw refusal(error, logger: logger)
        }
    }

    /// Seconds a client is told to wait when storage does not answer: long enough for a database restart
    /// to show, short enough that nothing waits long once it is back.
    static let retryAfterSeconds = 5
    private static let unavailableLog = LogThrottle(interval: .seconds(10))

    /// docs/protocol.md §3: storage that does not answer now (the database down or restarting, the disk
    /// full) is `503 unavailable` with `Retry-After`; anything else a store throws is `500 internal`.
    static func refusal(_ error: any Error, logger: Logger) -> APIError {
        if let error = error as? StoreError, error.isTransient {
            // While the database is down every request fails alike: one line per interval, not a flood.
            if let suppressed = unavailableLog.due() {
                logger.warning("storage unavailable (\(suppressed) more such answers since the last line): \(error)")
            }
            return APIError(.unavailable, "storage is unavailable; retry later", retryAfter: retryAfterSeconds)
        }
        logger.error("storage failed: \(error)")
        return APIError(.internal, "storage failed")
    }
}
