public import HeraldCore

/// One queued push of the durable outbox, with what its body is made from.
public struct QueuedPush: Sendable, Hashable {
    public let id: Int64
    /// The feed item pushed; nil for a setup confirmation.
    public let sid: Int64?
    public let wallet: EthereumAddress
    public let platform: Platform
    public let deviceToken: String
    /// Fixed when the push was queued and reused on every retry (APNs `apns-id`).
    public let apnsID: [UInt8]
    /// Unix seconds.
    public let queuedAt: Int64
    /// Sends tried so far.
    public let attempts: Int
    /// The §4.2 content, when the push is for a feed item.
    public let notification: DeliveredNotification?
    /// Whether the binding it was queued for still exists; a push whose binding is gone is dropped.
    /// A Bisq push has no binding and is always bound.
    public let bound: Bool
    /// A Bisq relay push (docs/protocol.md §8): its opaque message and flags are the whole content.
    public let bisq: BisqRelayContent?
    /// A Web Push binding's subscription (its keys), read with the claim rather than once per send: a
    /// re-registration's keys apply to the pushes claimed after it, and a claim lasts seconds. nil for
    /// the other platforms, and when the binding is gone.
    public let webPushSubscription: WebPushSubscription?
    /// A notification push's `aps.badge` (the wallet's unread count when it was queued), or a read-sync
    /// push's count; nil without one (docs/protocol.md §10).
    public let badge: Int?
    /// A read-sync push: a badge-only APNs push or a data-only FCM `read` message, with `badge` the count.
    public let readSync: Bool
    /// The channel that sent the item pushed (APNs `aps.thread-id`, docs/protocol.md §11.4); nil for the
    /// pushes of no item.
    public let channel: EthereumAddress?
    /// The item's notification's push options (§11.4); empty for the pushes of no item.
    public let options: PushOptions
    /// Unix seconds: when it was due. Claims take pushes in the order of (`nextAttemptAt`, `id`).
    public let nextAttemptAt: Int64

    /// Where it stands in the claims' order.
    public var position: OutboxPosition { OutboxPosition(nextAttemptAt: nextAttemptAt, id: id) }

    public init(
        id: Int64, sid: Int64?, wallet: EthereumAddress, platform: Platform, deviceToken: String, apnsID: [UInt8],
        queuedAt: Int64, attempts: Int, notification: DeliveredNotification?, bound: Bool = true,
        bisq: BisqRelayContent? = nil, webPushSubscription: WebPushSubscription? = nil, badge: Int? = nil,
        readSync: Bool = false, channel: EthereumAddress? = nil, options: PushOptions = .none, nextAttemptAt: Int64 = 0
    ) {
        self.nextAttemptAt = nextAttemptAt
        self.channel = channel
        self.options = options
        self.badge = badge
        self.readSync = readSync
        self.bisq = bisq
        self.webPushSubscription = webPushSubscription
        self.bound = bound
        self.id = id
        self.sid = sid
        self.wallet = wallet
        self.platform = platform
        self.deviceToken = deviceToken
        self.apnsID = apnsID
        self.queuedAt = queuedAt
        self.attempts = attempts
        self.notification = notification
    }
}

/// A place in the order claims take due pushes in: by when they are due, then by id (the due index's
/// order after the platform). A claim `after` a position looks only at pushes past it.
public struct OutboxPosition: Sendable, Hashable, Comparable {
    /// Unix seconds.
    public let nextAttemptAt: Int64
    public let id: Int64

    public init(nextAttemptAt: Int64, id: Int64) {
        self.nextAttemptAt = nextAttemptAt
        self.id = id
    }

    /// Before every push.
    public static let start = OutboxPosition(nextAttemptAt: .min, id: .min)

    public static func < (lhs: OutboxPosition, rhs: OutboxPosition) -> Bool {
        (lhs.nextAttemptAt, lhs.id) < (rhs.nextAttemptAt, rhs.id)
    }
}

/// What `GET /v1/notifications/{sid}` tells the sending channel.
public struct PushReport: Sendable, Hashable {
    public struct Push: Sendable, Hashable {
        public let platform: Platform
        /// `queued`, `sent`, `failed` or `pruned`.
        public let status: String
        public let attempts: Int
        public let lastError: String?

        public init(platform: Platform, status: String, attempts: Int, lastError: String?) {
            self.platform = platform
            self.status = status
            self.attempts = attempts
            self.lastError = lastError
        }
    }

    public let sid: Int64
    public let channel: EthereumAddress
    /// Who signed the notification: the channel, or the delegate that sent it (docs/protocol.md §11.1).
    public let signer: EthereumAddress
    public let recipient: EthereumAddress
    public let pushes: [Push]

    public init(
        sid: Int64, channel: EthereumAddress, signer: EthereumAddress? = nil, recipient: EthereumAddress,
        pushes: [Push]
    ) {
        self.sid = sid
        self.channel = channel
        self.signer = signer ?? channel
        self.recipient = recipient
        self.pushes = pushes
    }
}

extension PushOptions {
    /// The options as a store kept them, a damaged value being `corrupt` rather than a trap.
    package static func stored(priority: String?, timeToLive: Int64?, collapseID: String?) throws -> PushOptions {
        do {
            let parsed = try priority.map { text -> Priority in
                guard let value = Priority(rawValue: text) else {
                    throw StoreError(.corrupt, "a stored push priority is \(text.prefix(16))")
                }
                return value
            }
            return try PushOptions(priority: parsed, timeToLive: timeToLive, collapseID: collapseID)
        } catch let error as OperationRejection {
            throw StoreError(.corrupt, "stored push options: \(error.message)")
        }
    }
}

/// What one delivery attempt did to a queued push.
public struct PushAttemptResult: Sendable, Hashable {
    public enum Disposition: Sendable, Hashable {
        /// The provider accepted it: it is never sent again.
        case sent
        /// Try again at this Unix time (still queued).
        case retry(at: Int64)
        /// Not sent (its push service had no room for another send): try at this Unix time, without
        /// counting an attempt, so that a busy service never uses up a push's attempts.
        case deferred(until: Int64)
        /// Given up: an answer that is not worth retrying, or too many attempts.
        case failed
        /// The device token is dead; the push is dropped.
        case pruned
    }

    public let id: Int64
    public let disposition: Disposition
    /// Why it was not sent (no secrets, no full tokens).
    public let error: String?

    public init(id: Int64, disposition: Disposition, error: String? = nil) {
        self.id = id
        self.disposition = disposition
        self.error = error
    }

    /// When a push still queued is due again (0 when it is not queued).
    public var nextAttemptAt: Int64 {
        switch disposition {
        case .retry(let at), .deferred(let at): return at
        case .sent, .failed, .pruned: return 0
        }
    }

    /// Whether the result was a send: only sends count towards `push.attempts`.
    public var isAttempt: Bool {
        if case .deferred = disposition { return false }
        return true
    }

    /// Whether the push ended unsent (failed or pruned): a `failed` event for its channel's webhook
    /// (docs/protocol.md §11.3).
    public var endsUnsent: Bool {
        switch disposition {
        case .failed, .pruned: return true
        case .sent, .retry, .deferred: return false
        }
    }

    /// The outbox status this result leaves the push in.
    public var status: String {
        switch disposition {
        case .sent: return "sent"
        case .retry, .deferred: return "queued"
        case .failed: return "failed"
        case .pruned: return "pruned"
        }
    }
}
