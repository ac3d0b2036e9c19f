package import HeraldCore

/// One event for a channel's webhook (docs/protocol.md §11.3), as queued: its kind, and its JSON members
/// after `"event"` and `"id"` (the id is the queue's, given when it is delivered).
package struct WebhookEvent: Sendable, Hashable {
    package let channel: EthereumAddress
    package let kind: WebhookEventKind
    package let fields: String

    package init(channel: EthereumAddress, kind: WebhookEventKind, fields: String) {
        self.channel = channel
        self.kind = kind
        self.fields = fields
    }
}

/// A push that ended unsent, with what a `failed` event says of it.
package struct UnsentPush: Sendable, Hashable {
    package let channel: EthereumAddress
    package let sid: Int64
    package let recipient: EthereumAddress
    package let platform: Platform
    package let reason: String

    package init(channel: EthereumAddress, sid: Int64, recipient: EthereumAddress, platform: Platform, reason: String) {
        self.channel = channel
        self.sid = sid
        self.recipient = recipient
        self.platform = platform
        self.reason = reason
    }
}

/// Decides §11.3's events once, for every backend: which causes make an event, for which webhooks, and
/// what it says. A backend reads the channel's webhook events in the cause's transaction and writes what
/// this returns there.
package enum WebhookEventPlanner {
    /// The longest `reason` of a `failed` event.
    package static let maximumReasonLength = 200

    /// A subscription that started or ended, when the channel's webhook asks for it; nil for a change that
    /// changed nothing, or a webhook that does not ask (or none).
    package static func event(
        for change: SubscriptionChange, outcome: SubscriptionChangeOutcome, webhook: WebhookEventSet?
    ) -> WebhookEvent? {
        let kind: WebhookEventKind
        switch outcome {
        case .subscribed(created: true): kind = .subscribed
        case .unsubscribed(existed: true): kind = .unsubscribed
        default: return nil
        }
        guard webhook?.contains(kind) == true else { return nil }
        let fields = JSONValue.object([
            ("channel", .string(change.channel.checksummed)), ("subscriber", .string(change.subscriber.checksummed)),
            ("at", .number(String(change.now))),
        ])
        return WebhookEvent(channel: change.channel, kind: kind, fields: members(fields))
    }

    /// A `failed` event for a push of one of the channel's notifications that ended unsent, when the
    /// channel's webhook asks for them.
    package static func event(for push: UnsentPush, at now: Int64, webhook: WebhookEventSet?) -> WebhookEvent? {
        guard webhook?.contains(.failed) == true else { return nil }
        let fields = JSONValue.object([
            ("channel", .string(push.channel.checksummed)), ("sid", .string(String(push.sid))),
            ("recipient", .string(push.recipient.checksummed)), ("platform", .string(push.platform.rawValue)),
            ("reason", .string(String(push.reason.prefix(maximumReasonLength)))), ("at", .number(String(now))),
        ])
        return WebhookEvent(channel: push.channel, kind: .failed, fields: members(fields))
    }

    /// An event as delivered: `{"event":…,"id":"…",<fields>}`, compact.
    package static func delivered(id: Int64, kind: WebhookEventKind, fields: String) -> String {
        #"{"event":"\#(kind.rawValue)","id":"\#(id)","# + fields + "}"
    }

    /// The compact members of an object, without its braces.
    private static func members(_ object: JSONValue) -> String {
        String(object.jsonText.dropFirst().dropLast())
    }
}
