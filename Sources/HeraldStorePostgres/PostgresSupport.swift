import HeraldCore
import HeraldStore
import NIOCore
import PostgresNIO
import Synchronization

/// A bytea parameter. Always a `ByteBuffer`: postgres-nio would send a `[UInt8]` as an array of `"char"`.
func bytea(_ bytes: [UInt8]) -> ByteBuffer { ByteBuffer(bytes: bytes) }

func bytea(_ address: EthereumAddress) -> ByteBuffer { ByteBuffer(bytes: address.bytes) }

/// One result row read by column index, every failure a thrown error (never a trap): the database
/// is outside the process, and a damaged or unexpected value must not bring the server down.
struct Columns {
    private let row: PostgresRandomAccessRow

    init(_ row: PostgresRow) { self.row = row.makeRandomAccess() }

    var count: Int { row.count }

    func int(_ index: Int) throws -> Int64 { try cell(index).decode(Int64.self) }

    func optionalInt(_ index: Int) throws -> Int64? { try cell(index).decode(Int64?.self) }

    func text(_ index: Int) throws -> String { try cell(index).decode(String.self) }

    func optionalText(_ index: Int) throws -> String? { try cell(index).decode(String?.self) }

    func bool(_ index: Int) throws -> Bool { try cell(index).decode(Bool.self) }

    func cellIsNull(_ index: Int) throws -> Bool { try cell(index).bytes == nil }

    func optionalBytes(_ index: Int) throws -> [UInt8]? {
        guard var buffer = try cell(index).decode(ByteBuffer?.self) else { return nil }
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    func bytes(_ index: Int) throws -> [UInt8] {
        var buffer = try cell(index).decode(ByteBuffer.self)
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    func address(_ index: Int) throws -> EthereumAddress {
        do { return try EthereumAddress(bytes: try bytes(index)) } catch {
            throw StoreError(.corrupt, "a stored address is not 20 bytes")
        }
    }

    func platform(_ index: Int) throws -> Platform {
        guard let platform = Platform(rawValue: try text(index)) else {
            throw StoreError(.corrupt, "unknown platform in store")
        }
        return platform
    }

    private func cell(_ index: Int) throws -> PostgresCell {
        guard index < row.count else { throw StoreError("a query returned \(row.count) columns, fewer than expected") }
        return row[index]
    }
}

extension PostgresRowSequence {
    /// Every row, mapped; the mapping's errors propagate.
    func rows<T>(_ map: (Columns) throws -> T) async throws -> [T] {
        var result: [T] = []
        for try await row in self { result.append(try map(Columns(row))) }
        return result
    }

    /// The first column of the first row as an integer (a count), 0 when there is no row.
    func integer() async throws -> Int64 {
        try await rows { try $0.int(0) }.first ?? 0
    }
}

extension AsyncSequence {
    /// Every element, in order (the rows of a prepared statement, already decoded).
    func collected() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self { elements.append(element) }
        return elements
    }
}

/// A write batch's `BEGIN` and `COMMIT`, prepared: as plain queries each was parsed and described again on
/// both sides at every batch (two of a registration batch's four round trips).
struct BeginStatement: PostgresPreparedStatement {
    typealias Row = ()
    static let name = "herald_begin"
    static let sql = "BEGIN"
    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws {}
}

/// See `BeginStatement`.
struct CommitStatement: PostgresPreparedStatement {
    typealias Row = ()
    static let name = "herald_commit"
    static let sql = "COMMIT"
    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws {}
}

/// A transaction's advisory locks of some wallets (`walletLockKey`), taken in key order. Prepared: a write
/// batch begins with it (or with `RegistrationFactsStatement`, which takes them too), and unprepared it was
/// parsed and planned again each time.
struct WalletLocksStatement: PostgresPreparedStatement {
    static let name = "herald_lock_wallets"
    static let sql = """
        SELECT count(pg_advisory_xact_lock(k)) FROM (SELECT k FROM unnest($1::bigint[]) AS t(k) ORDER BY k) s
        """

    let keys: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(keys)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int64 { try Columns(row).int(0) }
}

/// The advisory lock key of a wallet: its first 8 bytes (an address is a hash, so these are as good as
/// any hash of it). Writes lock their signer with it, so that the binding limit's count and the insert
/// that follows are one step across every node.
func walletLockKey(_ wallet: EthereumAddress) -> Int64 {
    Int64(bitPattern: wallet.bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
}

/// How PostgreSQL errors are told apart and described.
enum PostgresErrors {
    /// SQLSTATE of a failure that running the same transaction again can cure: a deadlock with another
    /// node's transaction, a serialization failure, a lock not available.
    static func isTransient(_ error: any Error) -> Bool {
        guard let state = sqlState(error) else { return false }
        return state == "40P01" || state == "40001" || state == "55P03"
    }

    /// The server's SQLSTATE, also from inside a transaction's error (not from its COMMIT: a failed
    /// COMMIT is never run again).
    static func sqlState(_ error: any Error) -> String? {
        if let error = error as? PostgresTransactionError {
            return (error.closureError ?? error.beginError).flatMap(sqlState)
        }
        return (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// What a failure means for the caller (docs/protocol.md §3): the server gone, restarting, out of
    /// connections or disk, or no connection within the deadline is `unavailable` (503, retried); a key
    /// taken meanwhile is `conflict`; damaged data is `corrupt`; the rest is `internal`.
    static func code(_ error: any Error) -> StoreError.Code {
        if let error = error as? StoreError { return error.code }
        if let error = error as? PostgresTransactionError {
            return (error.closureError ?? error.commitError ?? error.beginError).map(code) ?? .internal
        }
        if error is PostgresDecodingError { return .corrupt }
        if let error = error as? PSQLError {
            if let state = error.serverInfo?[.sqlState] { return code(sqlState: state) }
            switch error.code {
            case .messageDecodingFailure, .unexpectedBackendMessage, .invalidCommandTag, .tooManyParameters,
                .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError:
                return .internal
            default:
                // Connection faults: refused, closed by the server, the pool shut or the lease cancelled.
                return .unavailable
            }
        }
        // The pool's own errors (its circuit breaker after a minute of failed connects) and NIO's socket
        // errors reach here untyped: all say the server cannot be reached.
        return error is ChannelError || error is IOError || "\(type(of: error))".contains("ConnectionPool")
            ? .unavailable : .internal
    }

    static func code(sqlState state: String) -> StoreError.Code {
        switch state {
        case "57P01", "57P02", "57P03", "57014", "25006", "55P03", "40001", "40P01":
            // Shutting down, restarting, cancelled, a read-only standby, or a lock or serialization
            // failure that outlived the retries: the same call may well succeed in a moment.
            return .unavailable
        case "XX001", "XX002": return .corrupt
        default: break
        }
        switch state.prefix(2) {
        case "08", "53", "58": return .unavailable
        case "23": return .conflict
        default: return .internal
        }
    }

    /// `error` as a `StoreError` with `context` in front, its code from what PostgreSQL said.
    static func storeError(_ context: String, _ error: any Error) -> StoreError {
        StoreError(code(error), context + describe(error))
    }

    /// What went wrong, without the query's parameters (they hold user data) and without the
    /// connection's password: the server's SQLSTATE and message, or the client's error code and cause.
    static func describe(_ error: any Error) -> String {
        if let error = error as? StoreError { return error.description }
        if let error = error as? PostgresTransactionError {
            if let closure = error.closureError { return describe(closure) }
            if let commit = error.commitError { return "COMMIT failed: " + describe(commit) }
            if let begin = error.beginError { return "BEGIN failed: " + describe(begin) }
        }
        if let error = error as? PostgresDecodingError {
            let column = "\(error.columnName) (\(error.postgresType))"
            return "cannot read column \(column) as \(error.targetType): \(error.code)"
        }
        guard let error = error as? PSQLError else { return String(describing: error) }
        if let info = error.serverInfo {
            let state = info[.sqlState] ?? "?????"
            // Not the detail: it may quote a failing row, which holds user data.
            return "PostgreSQL error \(state): \(info[.message] ?? "no message")"
        }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }
}
