package import HeraldCore

/// What a backend read for a notification inside the write's transaction, for `NotificationPlanner`.
package struct NotificationFacts: Sendable, Hashable {
    /// The sending channel; nil when the signer is no channel.
    package let channel: ChannelRecord?
    /// Which of the named recipients (types 2–4) subscribe to the channel; empty for a broadcast, whose
    /// recipients are the subscribers themselves.
    package let followers: Set<EthereumAddress>

    package init(channel: ChannelRecord?, followers: Set<EthereumAddress>) {
        self.channel = channel
        self.followers = followers
    }
}

/// The notification row as stored: the text every recipient's item shows.
package struct StoredNotification: Sendable, Hashable {
    package let type: Int64
    package let title: String
    package let body: String
    package let app: String
    package let icon: String
    package let url: String
    package let subject: String
    package let message: String
    package let callToAction: String
    package let image: String
    /// Milliseconds: every item's `epoch`.
    package let epoch: Int64
}

/// One named recipient's feed item.
package struct PlannedItem: Sendable, Hashable {
    package let wallet: EthereumAddress
    /// The per-recipient secret of a type 2, lowercase hex (empty for the other types).
    package let secret: String
    /// Listed in the spam folder rather than the feed.
    package let spam: Bool
    /// One push is queued for each of the recipient's bindings.
    package let pushed: Bool
}

/// Who gets an item.
package enum PlannedRecipients: Sendable, Hashable {
    /// Every current subscriber of the channel, in address order: none is spam, each is pushed on every
    /// binding. Left to the backend as one set-based statement: a broadcast to a million subscribers
    /// never crosses into Swift one by one.
    case everySubscriber
    /// The named recipients, in the order named.
    case named([PlannedItem])
}

/// What a backend writes for a notification, with its nonce.
package enum NotificationPlan: Sendable, Hashable {
    case deliver(StoredNotification, PlannedRecipients)
    /// The signer is no channel: nothing is written, the nonce is not spent.
    case refuseUnknownChannel
}

/// Decides every rule of a Notification (docs/protocol.md §4.1, §4.2) once, for every backend: a type
/// 2's generic visible text, who is spam (a named recipient who does not subscribe), who is pushed.
package enum NotificationPlanner {
    package static func plan(_ submission: NotificationSubmission, facts: NotificationFacts) -> NotificationPlan {
        guard let channel = facts.channel else { return .refuseUnknownChannel }
        let payload = submission.payload
        // A type 2's visible text is generic: the channel's own title and body are discarded (§4.1).
        let secret = payload.kind == .secret
        let stored = StoredNotification(
            type: Int64(payload.kind.rawValue) ?? 0,
            title: secret ? DeliveredNotification.secretTitle(app: channel.name) : payload.title,
            body: secret ? DeliveredNotification.secretBody : payload.body,
            app: channel.name, icon: channel.icon, url: channel.url, subject: payload.subject,
            message: payload.message, callToAction: payload.callToAction, image: payload.image,
            epoch: submission.epoch)
        guard payload.kind != .broadcast else { return .deliver(stored, .everySubscriber) }
        let items = payload.recipients.map { recipient in
            let follows = facts.followers.contains(recipient.wallet)
            // Stored as sent: hex compared case-insensitively, output lowercase (docs/protocol.md, conventions).
            return PlannedItem(
                wallet: recipient.wallet, secret: recipient.secret?.lowercased() ?? "", spam: !follows,
                pushed: follows)
        }
        return .deliver(stored, .named(items))
    }

    /// The named recipients a backend must look up as followers (none for a broadcast).
    package static func namedRecipients(of submission: NotificationSubmission) -> [EthereumAddress] {
        submission.payload.kind == .broadcast ? [] : submission.payload.recipients.map(\.wallet)
    }
}
