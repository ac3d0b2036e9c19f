public import HeraldCore

/// One push, shaped and ready for its service, whatever it came from: an outbox row (the server maps
/// it), or a push a downstream Herald forwarded to this upstream (docs/protocol.md §7), which has no outbox row
/// here. Providers read nothing else; each uses the fields its service has and leaves the others.
/// Without the options (priority … threadID) every service gets what §4.3, §8 and §9 say it gets.
public struct PushMessage: Sendable, Hashable {
    /// What the push carries.
    public enum Content: Sendable, Hashable {
        /// The §4.2 payload (a feed item, its wake-up form, or the setup confirmation).
        case notification(PushContent)
        /// A Bisq push (docs/protocol.md §8): sent with Bisq's own bodies instead.
        case bisq(BisqPushContent)
        /// A read-sync push (§10): a badge-only APNs body or a data-only FCM `read` message.
        case readSync(ReadSyncContent)
    }

    /// How urgently the service should deliver it (docs/protocol.md §11.4 `push.priority`).
    public enum Priority: String, Sendable, Hashable {
        case high
        case normal
    }

    /// APNs `apns-push-type`: what the payload does on the device. Every push docs/protocol.md defines shows
    /// something (§4.3, §8, §10), so `alert` unless a caller knows better.
    public enum PushType: String, Sendable, Hashable {
        case alert
        case background
    }

    public let platform: Platform
    public let deviceToken: String
    /// 16 bytes, sent as APNs `apns-id` (fixed when first queued, the same on every retry).
    public let id: [UInt8]
    /// The push's deadline, Unix seconds: APNs `apns-expiration`, the base of Web Push's `TTL` and of
    /// FCM's `android.ttl`, a forwarded push's `expiresAt`.
    public let expiration: Int64
    public let content: Content
    /// nil: the content's own (``priorityOrDefault``; Web Push picks by type, §9).
    public let priority: Priority?
    public let pushType: PushType
    /// APNs `apns-collapse-id`, FCM `android.collapse_key`, Web Push `Topic`.
    public let collapseID: String?
    /// The message's own `push.ttl` (§11.4), when it gave one: FCM then gets `android.ttl`, and 0 means
    /// APNs `apns-expiration: 0` (one attempt, never stored).
    public let timeToLive: Int64?
    /// APNs `aps.badge` (§10), on a notification's body.
    public let badge: Int?
    /// APNs `aps.thread-id` (§11.4), on a notification's body.
    public let threadID: String?
    /// A Web Push binding's keys, which the push is encrypted for (§9); nil on the other platforms.
    public let webPushSubscription: WebPushSubscription?

    public init(
        platform: Platform, deviceToken: String, id: [UInt8], expiration: Int64, content: Content,
        priority: Priority? = nil, pushType: PushType = .alert, collapseID: String? = nil, timeToLive: Int64? = nil,
        badge: Int? = nil, threadID: String? = nil, webPushSubscription: WebPushSubscription? = nil
    ) {
        self.platform = platform
        self.deviceToken = deviceToken
        self.id = id
        self.expiration = expiration
        self.content = content
        self.priority = priority
        self.pushType = pushType
        self.collapseID = collapseID
        self.timeToLive = timeToLive
        self.badge = badge
        self.threadID = threadID
        self.webPushSubscription = webPushSubscription
    }

    /// The §4.2 content, unless this is a Bisq push.
    public var notification: PushContent? {
        if case .notification(let content) = content { return content }
        return nil
    }

    /// The Bisq content, if this is a Bisq push.
    public var bisq: BisqPushContent? {
        if case .bisq(let content) = content { return content }
        return nil
    }

    /// `priority`, or the content's own: high for a notification (§4.3), by its urgency for a Bisq push
    /// (§8). APNs and FCM send this; Web Push has a rule of its own without a priority.
    public var priorityOrDefault: Priority {
        if let priority { return priority }
        if case .bisq(let content) = content { return content.urgent ? .high : .normal }
        return .high
    }
}
