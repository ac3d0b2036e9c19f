public import HeraldCore

/// docs/protocol.md §10: what channels publish and subscribers choose, mutes and read state. Every change
/// is a signed operation applied with its nonce in one transaction, as the other roles' are.
public protocol SubscriberControlStore: Sendable {
    /// Replaces a channel's settings list, dropping the choices it no longer allows.
    func apply(_ change: ChannelSettingsChange) async throws -> ChannelSettingsOutcome

    /// Records a subscriber's choices among its channel's settings.
    func apply(_ change: SubscriberSettingsChange) async throws -> SubscriberSettingsOutcome

    /// Mutes (or unmutes) a channel's pushes to a subscriber.
    func apply(_ change: MuteChange) async throws -> MuteOutcome

    /// Marks a wallet's items read, and queues its read-sync pushes.
    func apply(_ change: ReadMarkChange) async throws -> ReadMarkOutcome

    /// A channel's settings list (`[]` before any); nil for an unknown channel.
    func channelSettings(of channel: EthereumAddress) async throws -> ChannelSettingsList?
}

/// The server's rules for what a send may take and what pushes carry (CLI.md `limits.*`, `push.badge`,
/// `push.readSync`), passed with each operation so that every node applies its own configuration.
public struct DeliveryPolicy: Sendable, Hashable {
    /// Items a channel may store per recipient an hour (types 2–4); 0: no limit.
    public let channelWalletPerHour: Int64
    /// How many of them at once; 0: no limit.
    public let channelWalletBurst: Int64
    /// Broadcasts a channel may send an hour, burst the same; 0: no limit.
    public let channelBroadcastsPerHour: Int64
    /// APNs notification pushes carry `aps.badge`.
    public let badges: Bool
    /// A read mark queues badge-only and FCM `read` pushes.
    public let readSync: Bool

    public init(
        channelWalletPerHour: Int64 = 60, channelWalletBurst: Int64 = 30, channelBroadcastsPerHour: Int64 = 12,
        badges: Bool = true, readSync: Bool = true
    ) {
        self.channelWalletPerHour = channelWalletPerHour
        self.channelWalletBurst = channelWalletBurst
        self.channelBroadcastsPerHour = channelBroadcastsPerHour
        self.badges = badges
        self.readSync = readSync
    }

    /// Every limit off (tools and benchmarks that fill feeds).
    public static let unlimited = DeliveryPolicy(
        channelWalletPerHour: 0, channelWalletBurst: 0, channelBroadcastsPerHour: 0)
}

/// The parts every §10 change shares: who signed, the nonce and the clock.
public struct SignedChange: Sendable, Hashable {
    public let publicKey: PublicKey
    public let nonce: UInt256
    /// What was signed: with the nonce, the operation's identity (docs/protocol.md §11.2).
    public let operation: OperationDigest
    /// Unix seconds after which the nonce may be forgotten (`expiresAt + skew`).
    public let nonceRetainedUntil: Int64
    /// The server clock when the operation was verified (Unix seconds).
    public let now: Int64

    public init(
        publicKey: PublicKey, nonce: UInt256, operation: OperationDigest, nonceRetainedUntil: Int64, now: Int64
    ) {
        self.operation = operation
        self.publicKey = publicKey
        self.nonce = nonce
        self.nonceRetainedUntil = nonceRetainedUntil
        self.now = now
    }
}

/// A verified ChannelSettings.
public struct ChannelSettingsChange: Sendable, Hashable {
    public let channel: EthereumAddress
    public let list: ChannelSettingsList
    public let signed: SignedChange

    public init(channel: EthereumAddress, list: ChannelSettingsList, signed: SignedChange) {
        self.channel = channel
        self.list = list
        self.signed = signed
    }
}

public enum ChannelSettingsOutcome: Sendable, Hashable {
    case saved(ChannelSettingsList)
    /// The signer is no channel: nothing changed, the nonce is not spent.
    case unknownChannel
    case replayed
    /// The same operation again (docs/protocol.md §11.2): nothing changed; the first copy's outcome, answered
    /// again with `Idempotent-Replay: true`.
    indirect case repeated(ChannelSettingsOutcome)
}

/// A verified SubscriberSettings.
public struct SubscriberSettingsChange: Sendable, Hashable {
    public let channel: EthereumAddress
    public let subscriber: EthereumAddress
    public let choices: SettingChoices
    public let signed: SignedChange

    public init(channel: EthereumAddress, subscriber: EthereumAddress, choices: SettingChoices, signed: SignedChange) {
        self.channel = channel
        self.subscriber = subscriber
        self.choices = choices
        self.signed = signed
    }
}

public enum SubscriberSettingsOutcome: Sendable, Hashable {
    /// Every setting of the channel with its effective value, in the list's order.
    case saved([EffectiveSetting])
    /// Not subscribed, or no such channel: nothing changed, the nonce is not spent.
    case notSubscribed
    /// A choice the channel's list does not allow (`invalid_settings`): nothing changed.
    case refused(OperationRejection)
    case replayed
    /// The same operation again (docs/protocol.md §11.2): nothing changed; the first copy's outcome, answered
    /// again with `Idempotent-Replay: true`.
    indirect case repeated(SubscriberSettingsOutcome)
}

/// One setting of a channel with the value that applies to one subscriber: its choice, or the default.
public struct EffectiveSetting: Sendable, Hashable {
    public let setting: ChannelSetting
    public let value: Int64

    public init(setting: ChannelSetting, value: Int64) {
        self.setting = setting
        self.value = value
    }

    /// Every setting of `list` with `choices` applied where they are allowed (a stored choice the list no
    /// longer allows reads as the default: docs/protocol.md §10).
    public static func resolve(_ list: ChannelSettingsList, choices: [String: Int64]) -> [EffectiveSetting] {
        list.settings.map { setting in
            let chosen = choices[setting.id].flatMap { setting.allowedValues.contains($0) ? $0 : nil }
            return EffectiveSetting(setting: setting, value: chosen ?? setting.defaultValue)
        }
    }
}

/// A verified Mute; `until` 0 unmutes.
public struct MuteChange: Sendable, Hashable {
    public let channel: EthereumAddress
    public let subscriber: EthereumAddress
    public let until: Int64
    public let signed: SignedChange

    public init(channel: EthereumAddress, subscriber: EthereumAddress, until: Int64, signed: SignedChange) {
        self.channel = channel
        self.subscriber = subscriber
        self.until = until
        self.signed = signed
    }
}

public enum MuteOutcome: Sendable, Hashable {
    case muted(until: Int64)
    case notSubscribed
    /// `until` is neither 0 nor within ten years after now (`bad_request`): nothing changed.
    case outOfRange
    case replayed
    /// The same operation again (docs/protocol.md §11.2): nothing changed; the first copy's outcome, answered
    /// again with `Idempotent-Replay: true`.
    indirect case repeated(MuteOutcome)
}

/// A verified ReadMark.
public struct ReadMarkChange: Sendable, Hashable {
    public let wallet: EthereumAddress
    public let sids: [Int64]
    /// Every item with `sid ≤ upTo` (0: none).
    public let upTo: Int64
    public let signed: SignedChange
    public let policy: DeliveryPolicy

    public init(wallet: EthereumAddress, sids: [Int64], upTo: Int64, signed: SignedChange, policy: DeliveryPolicy) {
        self.wallet = wallet
        self.sids = sids
        self.upTo = upTo
        self.signed = signed
        self.policy = policy
    }
}

public enum ReadMarkOutcome: Sendable, Hashable {
    /// `unread`: the wallet's unread items that are not spam, after the mark; `pushes`: read-sync pushes
    /// queued (none when nothing changed).
    case marked(unread: Int, pushes: Int)
    case replayed
    /// The same operation again (docs/protocol.md §11.2): nothing changed; the first copy's outcome, answered
    /// again with `Idempotent-Replay: true`.
    indirect case repeated(ReadMarkOutcome)
}
