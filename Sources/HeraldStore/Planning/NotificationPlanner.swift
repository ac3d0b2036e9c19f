package import HeraldCore

/// What a backend read for a notification inside the write's transaction, for `NotificationPlanner`.
package struct NotificationFacts: Sendable, Hashable {
    /// The sending channel; nil when the signer is no channel.
    package let channel: ChannelRecord?
    /// The channel's settings list (docs/protocol.md §10).
    package let settings: ChannelSettingsList
    /// The named recipients (types 2–4) that subscribe to the channel, with what §10 keeps for each; empty
    /// for a broadcast, whose recipients are the subscribers themselves.
    package let followers: [EthereumAddress: FollowerFacts]
    /// Each named recipient's bucket (ms at which it is full again; absent: full). Read only when the
    /// per-wallet limit is on.
    package let walletBuckets: [EthereumAddress: Int64]
    /// The channel's broadcast bucket, for a broadcast with the limit on.
    package let broadcastBucket: Int64
    /// Whether the signer, when it is not the channel, is one of the channel's delegates (docs/protocol.md
    /// §11.1), read in the send's transaction so that a removal answered before the send began is seen.
    package let signerIsDelegate: Bool

    package init(
        channel: ChannelRecord?, settings: ChannelSettingsList = .empty,
        followers: [EthereumAddress: FollowerFacts] = [:], walletBuckets: [EthereumAddress: Int64] = [:],
        broadcastBucket: Int64 = 0, signerIsDelegate: Bool = false
    ) {
        self.signerIsDelegate = signerIsDelegate
        self.channel = channel
        self.settings = settings
        self.followers = followers
        self.walletBuckets = walletBuckets
        self.broadcastBucket = broadcastBucket
    }

    package init(channel: ChannelRecord?, followers: Set<EthereumAddress>) {
        self.init(
            channel: channel, followers: Dictionary(uniqueKeysWithValues: followers.map { ($0, FollowerFacts()) }))
    }
}

/// A subscribed recipient's §10 state: its choice of the setting the notification names, and its mute.
package struct FollowerFacts: Sendable, Hashable {
    /// nil: no choice stored (the default applies), or the notification names no setting.
    package let choice: Int64?
    /// Unix seconds; muted while now is before it.
    package let mutedUntil: Int64

    package init(choice: Int64? = nil, mutedUntil: Int64 = 0) {
        self.choice = choice
        self.mutedUntil = mutedUntil
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
    /// How its pushes are delivered (docs/protocol.md §11.4), kept on the notification: every push of it
    /// and every retry reads them from there.
    package let push: PushOptions
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
    /// Stored, not spam, but not pushed: the subscriber muted the channel.
    package let muted: Bool
}

/// Which stored choice lets a subscriber through (docs/protocol.md §10): its value of `setting`, or the
/// default without one, within `passing`.
package struct ChoiceFilter: Sendable, Hashable {
    package let setting: String
    package let defaultValue: Int64
    package let passing: ClosedRange<Int64>

    package func passes(_ choice: Int64?) -> Bool { passing.contains(choice ?? defaultValue) }
}

/// A broadcast's rules, for the backend's set-based statements.
package struct BroadcastRules: Sendable, Hashable {
    /// Only subscribers passing it get an item; nil: every subscriber.
    package let filter: ChoiceFilter?
    /// No push for subscribers muted at this time (Unix seconds): `muted_until > mutedAt`.
    package let mutedAt: Int64
}

/// Who gets an item.
package enum PlannedRecipients: Sendable, Hashable {
    /// Every current subscriber of the channel passing the rules, in address order: none is spam, each
    /// not muted is pushed on every binding. Left to the backend as set-based statements: a broadcast to a
    /// million subscribers never crosses into Swift one by one.
    case everySubscriber(BroadcastRules)
    /// The named recipients that get an item, in the order named.
    case named([PlannedItem], filtered: Int, throttled: [EthereumAddress])
}

/// Bucket times to store with the notification (docs/protocol.md §10 limits).
package struct BucketUpdates: Sendable, Hashable {
    /// The channel's broadcast bucket; nil: unchanged.
    package let broadcast: Int64?
    /// Per-(channel, recipient) buckets.
    package let wallets: [(wallet: EthereumAddress, fullAt: Int64)]

    package static let none = BucketUpdates(broadcast: nil, wallets: [])

    package static func == (lhs: BucketUpdates, rhs: BucketUpdates) -> Bool {
        lhs.broadcast == rhs.broadcast && lhs.wallets.elementsEqual(rhs.wallets) { $0 == $1 }
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(broadcast)
        for update in wallets {
            hasher.combine(update.wallet)
            hasher.combine(update.fullAt)
        }
    }
}

/// What a backend writes for a notification, with its nonce.
package struct NotificationDelivery: Sendable, Hashable {
    package let stored: StoredNotification
    package let recipients: PlannedRecipients
    package let buckets: BucketUpdates
    /// APNs notification pushes carry `aps.badge`: the wallet's unread count with this item.
    package let badges: Bool
}

package enum NotificationPlan: Sendable, Hashable {
    case deliver(NotificationDelivery)
    /// The signer is no channel: nothing is written, the nonce is not spent.
    case refuseUnknownChannel
    /// The signer is neither the channel nor a current delegate of it: nothing is written.
    case refuseNotDelegate
    /// The payload's `setting` does not fit the channel's list (`invalid_payload`): nothing is written.
    case refuseSetting(OperationRejection)
    /// The channel's broadcast bucket is empty: nothing is written; retry after this many seconds.
    case refuseBroadcastLimit(retryAfter: Int64)
}

/// Decides every rule of a Notification (docs/protocol.md §4.1, §4.2, §10) once, for every backend: a
/// type 2's generic visible text, who is spam (a named recipient who does not subscribe), who is filtered
/// by the setting it names, who is throttled by its bucket, who is muted, who is pushed.
package enum NotificationPlanner {
    package static func plan(_ submission: NotificationSubmission, facts: NotificationFacts) -> NotificationPlan {
        guard let channel = facts.channel else { return .refuseUnknownChannel }
        guard submission.signer == submission.channel || facts.signerIsDelegate else { return .refuseNotDelegate }
        let payload = submission.payload
        let filter: ChoiceFilter?
        do { filter = try choiceFilter(payload.setting, in: facts.settings) } catch { return .refuseSetting(error) }
        let policy = submission.policy
        let nowMs = submission.epoch
        let stored = storedNotification(submission, channel: channel)
        guard payload.kind != .broadcast else {
            var fullAt: Int64? = nil
            if let bucket = SendBucket(perHour: policy.channelBroadcastsPerHour, burst: policy.channelBroadcastsPerHour)
            {
                guard let next = bucket.take(fullAt: facts.broadcastBucket, now: nowMs) else {
                    return .refuseBroadcastLimit(
                        retryAfter: bucket.secondsUntilToken(fullAt: facts.broadcastBucket, now: nowMs))
                }
                fullAt = next
            }
            return .deliver(
                NotificationDelivery(
                    stored: stored,
                    recipients: .everySubscriber(BroadcastRules(filter: filter, mutedAt: submission.now)),
                    buckets: BucketUpdates(broadcast: fullAt, wallets: []), badges: policy.badges))
        }
        let bucket = SendBucket(perHour: policy.channelWalletPerHour, burst: policy.channelWalletBurst)
        var items: [PlannedItem] = []
        var filtered = 0
        var throttled: [EthereumAddress] = []
        var taken: [(wallet: EthereumAddress, fullAt: Int64)] = []
        for recipient in payload.recipients {
            let follower = facts.followers[recipient.wallet]
            // Spam (not subscribed) is never filtered; a filtered recipient takes no token.
            if let follower, let filter, !filter.passes(follower.choice) {
                filtered += 1
                continue
            }
            if let bucket {
                guard let next = bucket.take(fullAt: facts.walletBuckets[recipient.wallet] ?? 0, now: nowMs) else {
                    throttled.append(recipient.wallet)
                    continue
                }
                taken.append((recipient.wallet, next))
            }
            let muted = follower.map { $0.mutedUntil > submission.now } ?? false
            // Stored as sent: hex compared case-insensitively, output lowercase (docs/protocol.md, conventions).
            items.append(
                PlannedItem(
                    wallet: recipient.wallet, secret: recipient.secret?.lowercased() ?? "", spam: follower == nil,
                    pushed: follower != nil && !muted, muted: muted))
        }
        return .deliver(
            NotificationDelivery(
                stored: stored, recipients: .named(items, filtered: filtered, throttled: throttled),
                buckets: BucketUpdates(broadcast: nil, wallets: taken), badges: policy.badges))
    }

    /// The named recipients a backend must look up as followers (none for a broadcast).
    package static func namedRecipients(of submission: NotificationSubmission) -> [EthereumAddress] {
        submission.payload.kind == .broadcast ? [] : submission.payload.recipients.map(\.wallet)
    }

    /// Whether the backend must read the named recipients' buckets, and the broadcast's.
    package static func readsWalletBuckets(_ submission: NotificationSubmission) -> Bool {
        submission.payload.kind != .broadcast
            && SendBucket(
                perHour: submission.policy.channelWalletPerHour, burst: submission.policy.channelWalletBurst) != nil
    }

    package static func readsBroadcastBucket(_ submission: NotificationSubmission) -> Bool {
        submission.payload.kind == .broadcast && submission.policy.channelBroadcastsPerHour > 0
    }

    private static func choiceFilter(
        _ setting: NotificationSetting?, in list: ChannelSettingsList
    ) throws(OperationRejection) -> ChoiceFilter? {
        guard let setting else { return nil }
        let passing = try setting.passingValues(in: list)
        let defaultValue = list[setting.id]?.defaultValue ?? 0
        return ChoiceFilter(setting: setting.id, defaultValue: defaultValue, passing: passing)
    }

    private static func storedNotification(
        _ submission: NotificationSubmission, channel: ChannelRecord
    ) -> StoredNotification {
        let payload = submission.payload
        // A type 2's visible text is generic: the channel's own title and body are discarded (§4.1).
        let secret = payload.kind == .secret
        return StoredNotification(
            type: Int64(payload.kind.rawValue) ?? 0,
            title: secret ? DeliveredNotification.secretTitle(app: channel.name) : payload.title,
            body: secret ? DeliveredNotification.secretBody : payload.body,
            app: channel.name, icon: channel.icon, url: channel.url, subject: payload.subject,
            message: payload.message, callToAction: payload.callToAction, image: payload.image,
            epoch: submission.epoch, push: payload.push)
    }
}
