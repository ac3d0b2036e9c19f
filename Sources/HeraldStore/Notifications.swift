public import HeraldCore

/// A verified Notification with its parsed §4.1 payload, ready to store.
public struct NotificationSubmission: Sendable {
    public let channel: EthereumAddress
    public let publicKey: PublicKey
    public let payload: NotificationPayload
    public let nonce: UInt256
    public let nonceRetainedUntil: Int64
    /// Unix seconds (push queue times).
    public let now: Int64
    /// Milliseconds: every item's `epoch`.
    public let epoch: Int64

    public init(
        channel: EthereumAddress, publicKey: PublicKey, payload: NotificationPayload, nonce: UInt256,
        nonceRetainedUntil: Int64, now: Int64, epoch: Int64
    ) {
        self.channel = channel
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
    /// The (channel, nonce) pair was already used: nothing changed.
    case replayed
}

/// What a committed notification produced.
public struct NotificationReceipt: Sendable, Hashable {
    /// One sid per recipient, in recipient order (a broadcast: subscriber address order).
    public let sids: [Int64]
    /// Items marked spam (recipients not subscribed to the channel): no push for them.
    public let spam: Int
    /// Outbox rows queued: one per binding of each recipient that is not spam.
    public let pushes: Int

    public init(sids: [Int64], spam: Int, pushes: Int) {
        self.sids = sids
        self.spam = spam
        self.pushes = pushes
    }
}

/// One item of a wallet's feed, as `GET /v1/users/{wallet}/feeds` lists it.
public struct FeedEntry: Sendable, Hashable {
    public let sender: EthereumAddress
    public let notification: DeliveredNotification

    public init(sender: EthereumAddress, notification: DeliveredNotification) {
        self.sender = sender
        self.notification = notification
    }
}

/// A page of a feed and the size of the whole set it was cut from.
public struct FeedPage: Sendable, Hashable {
    public let entries: [FeedEntry]
    public let total: Int

    public init(entries: [FeedEntry], total: Int) {
        self.entries = entries
        self.total = total
    }
}
