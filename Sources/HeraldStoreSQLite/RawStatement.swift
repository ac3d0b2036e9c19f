import Foundation
import GRDB
import GRDBSQLite
import HeraldStore

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

    /// Binds the bytes, or NULL.
    func bind(_ index: Int32, blobOrNull bytes: [UInt8]?) {
        guard let bytes else {
            sqlite3_bind_null(statement, index)
            return
        }
        bind(index, bytes)
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(statement, index, value)
    }

    // Every run ends with a reset: a statement left active (a row read but not stepped past, or even
    // done but not reset) keeps its connection's read snapshot open, and a reader connection would
    // then serve that old snapshot to every later read (seen as a feed that did not show new items).

    /// Runs a statement that returns no rows.
    func execute() throws {
        defer { sqlite3_reset(statement) }
        let result = sqlite3_step(statement)
        guard result == SQLITE_DONE else { throw failure(result) }
    }

    /// Runs a statement and returns the first column of its first row as an integer, if any.
    func integer() throws -> Int64? {
        defer { sqlite3_reset(statement) }
        let result = sqlite3_step(statement)
        switch result {
        case SQLITE_ROW: return sqlite3_column_int64(statement, 0)
        case SQLITE_DONE: return nil
        default: throw failure(result)
        }
    }

    /// Rows changed by the last statement on this connection.
    var changes: Int32 { sqlite3_changes(connection) }

    /// The rowid of the last row inserted on this connection.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(connection) }

    /// Runs a query and maps each row (columns read through ``Columns``).
    func rows<T>(_ map: (Columns) throws -> T) throws -> [T] {
        defer { sqlite3_reset(statement) }
        var result: [T] = []
        while true {
            let code = sqlite3_step(statement)
            switch code {
            case SQLITE_ROW: result.append(try map(Columns(statement: statement)))
            case SQLITE_DONE: return result
            default: throw failure(code)
            }
        }
    }

    /// The columns of the current row.
    struct Columns {
        let statement: OpaquePointer

        func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(statement, index) }

        func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }

        func text(_ index: Int32) -> String {
            guard let pointer = sqlite3_column_text(statement, index) else { return "" }
            let count = Int(sqlite3_column_bytes(statement, index))
            return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
        }

        /// Nil for NULL; a zero-length blob reads as `[]`.
        func optionalBlob(_ index: Int32) -> [UInt8]? { isNull(index) ? nil : blob(index) }

        func blob(_ index: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let pointer = sqlite3_column_blob(statement, index) else { return [] }
            return Array(UnsafeRawBufferPointer(start: pointer, count: count))
        }
    }

    private func failure(_ code: Int32) -> StoreError {
        StoreError(
            StoreError.sqliteCode(primary: code & 0xff),
            "SQLite error \(code): \(String(cString: sqlite3_errmsg(connection)))")
    }
}
