package import HeraldCore

/// One of docs/protocol.md §10's operations, or §11.1's Delegate, as a backend's writer queues it.
package enum SubscriberControlWrite: Sendable, Hashable {
    case channelSettings(ChannelSettingsChange)
    case delegate(DelegateChange)
    case subscriberSettings(SubscriberSettingsChange)
    case mute(MuteChange)
    case readMark(ReadMarkChange)
    case webhook(WebhookChange)

    /// Whose nonce it spends, and whose lock it takes.
    package var signer: EthereumAddress {
        switch self {
        case .channelSettings(let change): return change.channel
        case .delegate(let change): return change.channel
        case .subscriberSettings(let change): return change.subscriber
        case .mute(let change): return change.subscriber
        case .readMark(let change): return change.wallet
        case .webhook(let change): return change.channel
        }
    }

    package var signed: SignedChange {
        switch self {
        case .channelSettings(let change): return change.signed
        case .delegate(let change): return change.signed
        case .subscriberSettings(let change): return change.signed
        case .mute(let change): return change.signed
        case .readMark(let change): return change.signed
        case .webhook(let change): return change.signed
        }
    }
}

/// What a backend's writer answers for a ``SubscriberControlWrite``.
package enum SubscriberControlOutcome: Sendable, Hashable {
    case channelSettings(ChannelSettingsOutcome)
    case delegate(DelegateOutcome)
    case subscriberSettings(SubscriberSettingsOutcome)
    case mute(MuteOutcome)
    case readMark(ReadMarkOutcome)
    case webhook(WebhookOutcome)
    /// The nonce was spent already, by another operation.
    case replayed
    /// The same operation again (docs/protocol.md §11.2): the first copy's outcome.
    indirect case repeated(SubscriberControlOutcome)

    package var channelSettings: ChannelSettingsOutcome? {
        switch self {
        case .channelSettings(let outcome): return outcome
        case .replayed: return .replayed
        case .repeated(let first): return first.channelSettings.map { .repeated($0) }
        default: return nil
        }
    }

    package var delegate: DelegateOutcome? {
        switch self {
        case .delegate(let outcome): return outcome
        case .replayed: return .replayed
        case .repeated(let first): return first.delegate.map { .repeated($0) }
        default: return nil
        }
    }

    package var subscriberSettings: SubscriberSettingsOutcome? {
        switch self {
        case .subscriberSettings(let outcome): return outcome
        case .replayed: return .replayed
        case .repeated(let first): return first.subscriberSettings.map { .repeated($0) }
        default: return nil
        }
    }

    package var mute: MuteOutcome? {
        switch self {
        case .mute(let outcome): return outcome
        case .replayed: return .replayed
        case .repeated(let first): return first.mute.map { .repeated($0) }
        default: return nil
        }
    }

    package var readMark: ReadMarkOutcome? {
        switch self {
        case .readMark(let outcome): return outcome
        case .replayed: return .replayed
        case .repeated(let first): return first.readMark.map { .repeated($0) }
        default: return nil
        }
    }

    package var webhook: WebhookOutcome? {
        switch self {
        case .webhook(let outcome): return outcome
        case .replayed: return .replayed
        case .repeated(let first): return first.webhook.map { .repeated($0) }
        default: return nil
        }
    }
}
