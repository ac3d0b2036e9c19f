public import HeraldCore

/// A channel: a sender wallet (a dApp, an exchange, a bot) with what fills `app`, `icon`, `url` of
/// every item it sends.
public struct ChannelRecord: Sendable, Hashable {
    public let address: EthereumAddress
    public let name: String
    public let icon: String
    public let url: String
    public let createdAt: Int64

    public init(address: EthereumAddress, name: String, icon: String, url: String, createdAt: Int64) {
        self.address = address
        self.name = name
        self.icon = icon
        self.url = url
        self.createdAt = createdAt
    }
}

/// A subscriber's subscription as listed to that subscriber.
public struct SubscriptionRecord: Sendable, Hashable {
    public let channel: EthereumAddress
    public let name: String
    public let since: Int64
    /// The subscriber's unread items from this channel that are not spam (docs/protocol.md §10).
    public let unread: Int
    /// The channel's settings with the subscriber's choices applied.
    public let settings: [EffectiveSetting]
    /// Unix seconds as stored (0: never muted); ``mutedUntil(at:)`` says whether it still holds.
    public let storedMutedUntil: Int64

    public init(
        channel: EthereumAddress, name: String, since: Int64, unread: Int = 0, settings: [EffectiveSetting] = [],
        mutedUntil: Int64 = 0
    ) {
        self.channel = channel
        self.name = name
        self.since = since
        self.unread = unread
        self.settings = settings
        self.storedMutedUntil = mutedUntil
    }

    /// The mute at `now`: its end, or 0 when there is none or it lapsed (a mute lapses by time alone).
    public func mutedUntil(at now: Int64) -> Int64 { storedMutedUntil > now ? storedMutedUntil : 0 }
}

/// A verified Subscription, ready to apply.
public struct SubscriptionChange: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        case subscribe
        case unsubscribe
    }

    public let action: Action
    public let channel: EthereumAddress
    public let subscriber: EthereumAddress
    public let publicKey: PublicKey
    public let nonce: UInt256
    /// What was signed: with the nonce, the operation's identity (docs/protocol.md §11.2).
    public let operation: OperationDigest
    public let nonceRetainedUntil: Int64
    public let now: Int64

    public init(
        action: Action, channel: EthereumAddress, subscriber: EthereumAddress, publicKey: PublicKey, nonce: UInt256,
        operation: OperationDigest, nonceRetainedUntil: Int64, now: Int64
    ) {
        self.operation = operation
        self.action = action
        self.channel = channel
        self.subscriber = subscriber
        self.publicKey = publicKey
        self.nonce = nonce
        self.nonceRetainedUntil = nonceRetainedUntil
        self.now = now
    }
}

public enum SubscriptionChangeOutcome: Sendable, Hashable {
    /// Subscribed now; `created` is false when the subscription already existed.
    case subscribed(created: Bool)
    /// Not subscribed now; `existed` tells whether a subscription was removed.
    case unsubscribed(existed: Bool)
    /// No such channel: nothing changed, the nonce is not spent.
    case unknownChannel
    /// The (signer, nonce) pair was already used by another operation: nothing changed.
    case replayed
    /// The same operation again (docs/protocol.md §11.2): nothing changed; the first copy's outcome, answered
    /// again with `Idempotent-Replay: true`.
    indirect case repeated(SubscriptionChangeOutcome)
}
