package import HeraldCore

/// A choice a new settings list still allows: of a setting with the same id and kind as before, with a
/// value within `values` (docs/protocol.md §10). Every other stored choice of the channel is dropped.
package struct KeptChoices: Sendable, Hashable {
    package let id: String
    package let values: ClosedRange<Int64>
}

package enum ChannelSettingsPlan: Sendable, Hashable {
    /// Store the list; delete the channel's choices outside `kept`.
    case save(ChannelSettingsList, kept: [KeptChoices])
    case refuseUnknownChannel
}

package enum SubscriberSettingsPlan: Sendable, Hashable {
    /// Upsert `choices`; answer `effective`.
    case save(choices: [String: Int64], effective: [EffectiveSetting])
    case refuseNotSubscribed
    case refuse(OperationRejection)
}

package enum MutePlan: Sendable, Hashable {
    case save(until: Int64)
    case refuseNotSubscribed
    case refuseOutOfRange
}

/// What a backend read for a subscriber's operation (SubscriberSettings, Mute) in its transaction.
package struct SubscriberFacts: Sendable, Hashable {
    /// The channel's list when the wallet subscribes to it; nil when it does not (or there is no channel).
    package let list: ChannelSettingsList?
    /// The subscriber's stored choices.
    package let choices: [String: Int64]

    package init(list: ChannelSettingsList?, choices: [String: Int64] = [:]) {
        self.list = list
        self.choices = choices
    }
}

/// One read-sync push (docs/protocol.md §10): a badge-only APNs push or a data-only FCM `read` message.
package struct ReadSyncPush: Sendable, Hashable {
    package let platform: Platform
    package let deviceToken: String
    package let unread: Int
}

/// Decides every rule of docs/protocol.md §10's operations once, for every backend, from what the
/// backend read in the operation's transaction; the backend spends the nonce only for a plan that saves.
package enum SubscriberControlPlanner {
    package static func plan(
        _ change: ChannelSettingsChange, channelExists: Bool, current: ChannelSettingsList
    ) -> ChannelSettingsPlan {
        guard channelExists else { return .refuseUnknownChannel }
        let kept = change.list.settings.compactMap { setting -> KeptChoices? in
            guard let old = current[setting.id], setting.keepsChoices(madeUnder: old) else { return nil }
            return KeptChoices(id: setting.id, values: setting.allowedValues)
        }
        return .save(change.list, kept: kept)
    }

    package static func plan(_ change: SubscriberSettingsChange, facts: SubscriberFacts) -> SubscriberSettingsPlan {
        guard let list = facts.list else { return .refuseNotSubscribed }
        let chosen: [String: Int64]
        do { chosen = try change.choices.resolved(against: list) } catch { return .refuse(error) }
        let merged = facts.choices.merging(chosen) { _, new in new }
        return .save(choices: chosen, effective: EffectiveSetting.resolve(list, choices: merged))
    }

    /// The subscription first (`not_found`), then `until` against the clock (`bad_request`).
    package static func plan(_ change: MuteChange, subscribed: Bool) -> MutePlan {
        guard subscribed else { return .refuseNotSubscribed }
        guard Mute.isAllowed(until: change.until, now: change.signed.now) else { return .refuseOutOfRange }
        return .save(until: change.until)
    }

    /// The read-sync pushes of a mark that took the wallet's unread count from `before` to `after`: none
    /// when it did not change; with `readSync`, a badge-only push per APNs binding (when badges are on)
    /// and a `read` message per FCM binding; nothing for Web Push (browsers penalise silent pushes).
    package static func readSyncPushes(
        before: Int, after: Int, bindings: [DeviceBindingRecord], policy: DeliveryPolicy
    ) -> [ReadSyncPush] {
        guard before != after, policy.readSync else { return [] }
        return bindings.compactMap { binding in
            switch binding.platform {
            case .ios, .iosSandbox:
                guard policy.badges else { return nil }
            case .android: break
            case .webpush: return nil
            }
            return ReadSyncPush(platform: binding.platform, deviceToken: binding.deviceToken, unread: after)
        }
    }
}
