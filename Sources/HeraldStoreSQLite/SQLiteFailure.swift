import GRDB
import GRDBSQLite
import HeraldStore

/// What an SQLite failure means for the caller (docs/protocol.md §3): a database that cannot answer now
/// (busy or locked past the busy timeout, a full disk, failing I/O, a file that cannot be opened) is
/// `unavailable`, answered 503 and retried, never a 500 that reads as a bug.
extension StoreError {
    static func sqliteCode(primary: Int32) -> Code {
        switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_NOMEM, SQLITE_READONLY,
            SQLITE_PROTOCOL, SQLITE_INTERRUPT:
            return .unavailable
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return .corrupt
        case SQLITE_CONSTRAINT:
            return .conflict
        default:
            return .internal
        }
    }

    /// `error` as a `StoreError` with `context` in front: one already is keeps its code, GRDB's gets the
    /// code its SQLite result code says, anything else is `internal`.
    static func sqlite(_ error: any Error, _ context: String) -> StoreError {
        switch error {
        case let error as StoreError:
            return error.explained(context)
        case let error as DatabaseError:
            return StoreError(sqliteCode(primary: error.resultCode.primaryResultCode.rawValue), context + "\(error)")
        default:
            return StoreError(context + "\(error)")
        }
    }
}
