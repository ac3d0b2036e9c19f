import GRDB
import HeraldStore
import Synchronization

/// Every read and write outside the group-commit writer goes through here, so that a closed store and
/// a failing database answer with `StoreError`, as the PostgreSQL store does: callers (the server's
/// health check, the outbox workers) handle one error type whatever the backend.
extension SQLiteHeraldStore {
    func read<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        try refuseIfClosed()
        do {
            // Under `herald serve`: off the loop, answered on it (`SQLiteReadThreads`).
            if let home = WaiterHome.current() {
                return try await SQLiteReadThreads.read(pool, answeringOn: home, body).get()
            }
            return try await pool.read(body)
        } catch { throw failure("reading", error) }
    }

    func write<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        try refuseIfClosed()
        do { return try await pool.write(body) } catch { throw failure("writing", error) }
    }

    /// A write that shares the group-commit writer's transactions (and fsyncs) with registrations,
    /// instead of taking the database's single write lock for a transaction of its own: the outbox
    /// claims and records pushes while registrations arrive, and two writers took turns at the lock.
    func groupedWrite<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        try refuseIfClosed()
        guard case .grouped(let result) = try await writer.submit(.grouped({ db in try body(db) })) else {
            throw StoreError("the writer answered a grouped write with another kind of outcome")
        }
        switch result {
        case .success(let value):
            guard let value = value as? T else { throw StoreError("a grouped write returned an unexpected value") }
            return value
        case .failure(let error):
            throw failure("writing", error)
        }
    }

    /// A failure as `StoreError`: one already is passes through; any other names the file and gets the
    /// code its SQLite result says.
    func failure(_ verb: String, _ error: any Error) -> StoreError {
        error as? StoreError ?? StoreError.sqlite(error, "\(verb) \(path) failed: ")
    }

    func refuseIfClosed() throws {
        if closed.load(ordering: .acquiring) { throw StoreError.storeClosed }
    }
}
