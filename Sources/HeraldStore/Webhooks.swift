public import HeraldCore

/// docs/protocol.md §11.3: a channel's webhook, the events queued for it, and the key that signs them.
public protocol WebhookStore: Sendable {
    /// Sets, replaces or removes a channel's webhook, with the channel's nonce, in one transaction.
    func apply(_ change: WebhookChange) async throws -> WebhookOutcome

    /// A channel's webhook; nil when it has none.
    func webhook(of channel: EthereumAddress) async throws -> WebhookRecord?

    /// The server's webhook key (32 bytes): the one in the database, or `generated` stored as it when
    /// there is none yet. Every node of one database signs with the key the first of them stored.
    func webhookKey(generated: [UInt8]) async throws -> [UInt8]
}

/// A verified Webhook operation.
public struct WebhookChange: Sendable, Hashable {
    public let channel: EthereumAddress
    /// "" removes the webhook.
    public let url: String
    public let events: WebhookEventSet
    public let signed: SignedChange

    public init(channel: EthereumAddress, url: String, events: WebhookEventSet, signed: SignedChange) {
        self.channel = channel
        self.url = url
        self.events = events
        self.signed = signed
    }
}

/// The answer's `status`.
public enum WebhookStatus: String, Sendable, Hashable {
    /// The webhook is this URL and these events now.
    case set
    /// It was removed, with its queued events.
    case removed
    /// A removal when there was none.
    case absent
}

public enum WebhookOutcome: Sendable, Hashable {
    case applied(WebhookStatus)
    /// The signer is no channel (`forbidden`): nothing changed, the nonce is not spent.
    case unknownChannel
    case replayed
    /// The same operation again (docs/protocol.md §11.2): nothing changed; the first copy's outcome.
    indirect case repeated(WebhookOutcome)
}

/// A channel's webhook as stored.
public struct WebhookRecord: Sendable, Hashable {
    public let channel: EthereumAddress
    public let url: String
    public let events: WebhookEventSet

    public init(channel: EthereumAddress, url: String, events: WebhookEventSet) {
        self.channel = channel
        self.url = url
        self.events = events
    }
}

/// What a Webhook operation writes, decided from what the backend read in its transaction.
package enum WebhookPlan: Sendable, Hashable {
    /// Store the URL and events (replacing the webhook's), and drop the queued events of kinds the new
    /// events leave out.
    case save(dropKinds: [WebhookEventKind])
    /// Delete the webhook and its queued events.
    case delete
    /// A removal with nothing to remove; the nonce is still spent.
    case keepAbsent
    case refuseUnknownChannel

    /// What the operation answers.
    package var answer: WebhookOutcome {
        switch self {
        case .save: return .applied(.set)
        case .delete: return .applied(.removed)
        case .keepAbsent: return .applied(.absent)
        case .refuseUnknownChannel: return .unknownChannel
        }
    }
}

/// Decides docs/protocol.md §11.3's Webhook rules once, for every backend.
package enum WebhookPlanner {
    package static func plan(_ change: WebhookChange, channelExists: Bool, current: WebhookEventSet?) -> WebhookPlan {
        guard channelExists else { return .refuseUnknownChannel }
        if change.url.isEmpty { return current == nil ? .keepAbsent : .delete }
        let dropped = (current?.kinds ?? []).filter { !change.events.contains($0) }
        return .save(dropKinds: dropped)
    }
}
