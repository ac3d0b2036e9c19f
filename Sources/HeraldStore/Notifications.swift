public import HeraldCore

/// A verified Notification with its parsed §4.1 payload, ready to store.
public struct NotificationSubmission: Sendable {
    public let channel: EthereumAddress
    /// Who signed: the channel, or one of its delegates (docs/protocol.md §11.1), whose nonce it spends and
    /// whose public key it is.
    public let signer: EthereumAddress
    public let publicKey: PublicKey
    public let payload: NotificationPayload
    public let nonce: UInt256
    /// What was signed: with the nonce, the operation's identity (docs/protocol.md §11.2).
    public let operation: OperationDigest
    public let nonceRetainedUntil: Int64
    /// Unix seconds (push queue times).
    public let now: Int64
    /// Milliseconds: every item's `epoch`, and the clock of the §10 buckets.
    public let epoch: Int64
    /// The server's limits and badge rule (docs/protocol.md §10).
    public let policy: DeliveryPolicy

    public init(
        channel: EthereumAddress, publicKey: PublicKey, payload: NotificationPayload, nonce: UInt256,
        operation: OperationDigest, nonceRetainedUntil: Int64, now: Int64, epoch: Int64,
        policy: DeliveryPolicy = DeliveryPolicy(),
        signer: EthereumAddress? = nil
    ) {
        self.policy = policy
        self.operation = operation
        self.channel = channel
        self.signer = signer ?? channel
        self.publicKey = publicKey
        self.payload = payload
        self.nonce = nonce
        self.nonceRetainedUntil = nonceRetainedUntil
        self.now = now
        self.epoch = epoch
    }
}

public enum NotificationOutcome: Sendable, Hashable {
    /// Committed: items, outbox rows and the spent nonce.
    case accepted(NotificationReceipt)
    /// The signer is not a known channel: nothing changed, the nonce is not spent.
    case unknownChannel
    /// The (signer, nonce) pair was already used by another operation: nothing changed.
    case replayed
    /// The same operation again (docs/protocol.md §11.2): nothing changed; the first copy's outcome, answered
    /// again with `Idempotent-Replay: true`.
    indirect case repeated(NotificationOutcome)
    /// Signed by an address that is neither the channel nor one of its current delegates
    /// (`signature_mismatch`, docs/protocol.md §11.1): nothing changed, the nonce is not spent.
    case notDelegate
    /// The payload's `setting` does not fit the channel's list (`invalid_payload`): nothing changed.
    case refusedSetting(OperationRejection)
    /// A broadcast found its channel's bucket empty (docs/protocol.md §10): nothing changed, the nonce is
    /// not spent; one fits after this many seconds.
    case broadcastLimited(retryAfter: Int64)
}

/// What a committed notification produced.
public struct NotificationReceipt: Sendable, Hashable {
    /// One sid per recipient, in recipient order (a broadcast: subscriber address order).
    public let sids: [Int64]
    /// Items marked spam (recipients not subscribed to the channel): no push for them.
    public let spam: Int
    /// Outbox rows queued: one per binding of each recipient that is not spam and not muted.
    public let pushes: Int
    /// Subscribed recipients left out by the setting the notification names (docs/protocol.md §10).
    public let filtered: Int
    /// Recipients whose bucket was empty, in payload order: no item, no push.
    public let throttled: [EthereumAddress]
    /// Items stored for subscribers who muted the channel: not pushed.
    public let muted: Int

    public init(
        sids: [Int64], spam: Int, pushes: Int, filtered: Int = 0, throttled: [EthereumAddress] = [], muted: Int = 0
    ) {
        self.sids = sids
        self.spam = spam
        self.pushes = pushes
        self.filtered = filtered
        self.throttled = throttled
        self.muted = muted
    }
}

/// One item of a wallet's feed, as `GET /v1/users/{wallet}/feeds` lists it.
public struct FeedEntry: Sendable, Hashable {
    public let sender: EthereumAddress
    public let notification: DeliveredNotification
    /// Marked read by a ReadMark (docs/protocol.md §10).
    public let read: Bool

    public init(sender: EthereumAddress, notification: DeliveredNotification, read: Bool = false) {
        self.sender = sender
        self.notification = notification
        self.read = read
    }
}

/// A page of a feed and the size of the whole set it was cut from.
public struct FeedPage: Sendable, Hashable {
    public let entries: [FeedEntry]
    public let total: Int
    /// The wallet's unread items that are not spam, whatever the page (docs/protocol.md §10).
    public let unread: Int

    public init(entries: [FeedEntry], total: Int, unread: Int = 0) {
        self.entries = entries
        self.total = total
        self.unread = unread
    }
}
