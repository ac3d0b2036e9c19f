import GRDB
import HeraldCore
import HeraldStore

/// One write for the group-commit writer.
enum StoreWrite: Sendable {
    case device(DeviceChange)
    case subscription(SubscriptionChange)
    case notification(NotificationSubmission)
    /// docs/protocol.md §10's operations.
    case control(SubscriberControlWrite)
    /// A wallet's key from a FeedAccess (which changes nothing else): in the batch's transaction, so a
    /// burst of reads by wallets never seen costs one fsync, not one each.
    case publicKey(PublicKey, of: EthereumAddress, now: Int64)
    /// Any other write (the outbox's claims and outcomes), in a savepoint of its own.
    case grouped(@Sendable (Database) throws -> any Sendable)
}

enum StoreWriteOutcome: Sendable {
    case device(DeviceChangeOutcome)
    case subscription(SubscriptionChangeOutcome)
    case notification(NotificationOutcome)
    case control(SubscriberControlOutcome)
    case publicKeyRemembered
    /// A grouped write's value, or what it threw (its savepoint rolled back; the rest of the batch stands).
    case grouped(Result<any Sendable, any Error>)
}
