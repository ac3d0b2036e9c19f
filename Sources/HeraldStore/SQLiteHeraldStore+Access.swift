import GRDB
import Synchronization

/// Every read and write outside the group-commit writer goes through here, so that a closed store and
/// a failing database answer with `StoreError`, as the PostgreSQL store does: callers (the server's
/// health check, the outbox workers) handle one error type whatever the backend.
extension SQLiteHeraldStore {
    func read<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        try refuseIfClosed()
        do { return try await pool.read(body) } catch { throw failure("reading", error) }
    }

    func write<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        try refuseIfClosed()
        do { return try await pool.write(body) } catch { throw failure("writing", error) }
    }

    /// A failure as `StoreError`: one already is passes through; any other names the file.
    func failure(_ verb: String, _ error: any Error) -> StoreError {
        error as? StoreError ?? StoreError("\(verb) \(path) failed: \(error)")
    }

    func refuseIfClosed() throws {
        if closed.load(ordering: .acquiring) { throw StoreError("the store is closed") }
    }
}
