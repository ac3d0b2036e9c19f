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

    /// Claims one webhook with events due at `now` for `owner` until `leaseUntil`, with its oldest `limit`
    /// events, after dropping every event older than `now - maxAgeSeconds`; nil when none is due. One
    /// request at a time per webhook: no other claim returns it until the lease passes or the outcome is
    /// recorded, on any node.
    func claimWebhookBatch(
        now: Int64, maxAgeSeconds: Int64, owner: String, leaseUntil: Int64, limit: Int
    ) async throws -> WebhookBatch?

    /// Records what a delivery did, and ends `owner`'s claim.
    func record(_ outcome: WebhookDeliveryOutcome, owner: String) async throws

    /// Events queued and not delivered yet, for metrics.
    func queuedWebhookEventCount() async throws -> Int
}

/// A webhook's batch: its URL and its oldest events.
public struct WebhookBatch: Sendable, Hashable {
    public let channel: EthereumAddress
    public let url: String
    /// Delivery attempts of the batch at the head so far (0 for a first).
    public let attempts: Int
    public let events: [QueuedWebhookEvent]

    public init(channel: EthereumAddress, url: String, attempts: Int, events: [QueuedWebhookEvent]) {
        self.channel = channel
        self.url = url
        self.attempts = attempts
        self.events = events
    }
}

public struct QueuedWebhookEvent: Sendable, Hashable {
    public let id: Int64
    public let kind: WebhookEventKind
    /// The JSON members after `"event"` and `"id"`.
    public let fields: String
    public let queuedAt: Int64

    public init(id: Int64, kind: WebhookEventKind, fields: String, queuedAt: Int64) {
        self.id = id
        self.kind = kind
        self.fields = fields
        self.queuedAt = queuedAt
    }
}

/// What one delivery did to a webhook's batch.
public enum WebhookDeliveryOutcome: Sendable, Hashable {
    /// Answered 2xx: the events up to this id are gone.
    case delivered(EthereumAddress, through: Int64)
    /// Try again at this Unix time.
    case retry(EthereumAddress, at: Int64)
    /// Given up (3xx, another 4xx, or a wait past the oldest event's max age): the events up to this id
    /// are dropped unsent.
    case dropped(EthereumAddress, through: Int64)
    /// Answered 410: the webhook is removed with its queued events.
    case removed(EthereumAddress)
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

    /// The head of a webhook's queue split into the events past the max age at `now` (dropped unsent)
    /// and those still to deliver.
    package static func split(
        _ head: [QueuedWebhookEvent], now: Int64, maxAgeSeconds: Int64
    ) -> (expired: [Int64], due: [QueuedWebhookEvent]) {
        let cutoff = now.addingSaturated(-max(0, maxAgeSeconds))
        return (head.filter { $0.queuedAt < cutoff }.map(\.id), head.filter { $0.queuedAt >= cutoff })
    }
}
