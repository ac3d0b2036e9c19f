/// A storage failure, with what kind it is, set by each backend from what its engine said, so that the
/// server can tell "the database is down, retry" (503 `unavailable`, docs/protocol.md §3) from a bug
/// (500 `internal`).
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// Storage does not answer now and may later, with nothing wrong in the request: the server is
        /// down or restarting, no connection within the connect timeout, the disk full, the file locked
        /// or failing I/O. Nothing was stored.
        case unavailable
        /// The store was closed: the process is shutting down.
        case closed
        /// The write lost to another one in a way it cannot settle itself (a key taken meanwhile).
        case conflict
        /// Stored data is damaged, or the database is not one of Herald's.
        case corrupt
        /// Anything else: a fault in Herald itself.
        case `internal`
    }

    public let code: Code
    public let description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// A fault of Herald's own (an outcome of the wrong kind, a statement that returned nothing).
    public init(_ description: String) { self.init(.internal, description) }

    /// The store refuses calls once closed.
    public static let storeClosed = StoreError(.closed, "the store is closed")

    /// Whether the same call may succeed later without anything changing in it: answered `503` with
    /// `Retry-After`, and the background services try again.
    public var isTransient: Bool { code == .unavailable || code == .closed }

    /// This failure with `context` in front of its description, its code kept.
    public func explained(_ context: String) -> StoreError { StoreError(code, context + description) }
}
