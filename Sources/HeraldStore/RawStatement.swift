import Foundation
import GRDB
import GRDBSQLite

/// Binds and steps one of GRDB's cached statements through the SQLite C API: the group-commit
/// writer runs a handful of fixed statements per registration, and GRDB's general argument
/// handling (boxing every value) showed up in its profile. Statements still come from GRDB's cache.
struct RawStatement {
    private let statement: OpaquePointer
    private let connection: OpaquePointer?

    init(_ db: Database, _ sql: String) throws {
        statement = try db.cachedStatement(sql: sql).sqliteStatement
        connection = db.sqliteConnection
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    /// SQLite copies the bytes (SQLITE_TRANSIENT), so the buffers may go away after binding.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ index: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes {
            sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), Self.transient)
        }
    }

    func bind(_ index: Int32, _ text: String) {
        var text = text
        _ = text.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count), Self.transient)
            }
        }
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(statement, index, value)
    }

    /// Runs a statement that returns no rows.
    func execute() throws {
        let result = sqlite3_step(statement)
        guard result == SQLITE_DONE else { throw failure(result) }
    }

    /// Runs a statement and returns the first column of its first row as an integer, if any.
    func integer() throws -> Int64? {
        let result = sqlite3_step(statement)
        switch result {
        case SQLITE_ROW: return sqlite3_column_int64(statement, 0)
        case SQLITE_DONE: return nil
        default: throw failure(result)
        }
    }

    /// Rows changed by the last statement on this connection.
    var changes: Int32 { sqlite3_changes(connection) }

    private func failure(_ code: Int32) -> StoreError {
        StoreError("SQLite error \(code): \(String(cString: sqlite3_errmsg(connection)))")
    }
}
