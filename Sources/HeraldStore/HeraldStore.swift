public import HeraldCore
public import ServiceLifecycle

/// What the server needs from storage: every role below, on one database. Each backend
/// (`HeraldStoreSQLite`, `HeraldStorePostgres`) is a `Service`: it runs until the server shuts down and
/// then closes, after in-flight requests drained.
///
/// Every method that changes state returns only after the change is durable (committed and
/// synced): an acknowledged write survives a crash. A backend decides no rule of docs/protocol.md §4:
/// the planners (`DeviceChangePlanner`, `NotificationPlanner`, `SubscriptionChangePlanner`) do, from
/// what the backend read inside the write's transaction, and the backend writes their plan.
///
/// The roles are split as GRDB splits `DatabaseReader` from `DatabaseWriter`, so that a part of the
/// server can name the one it uses.
public protocol HeraldStore:
    BindingStore, ChannelStore, NotificationStore, OutboxStore, RelayStore, RetentionStore, MaintenanceStore,
    SubscriberControlStore,
    DelegateStore, WebhookStore,
    StoreDiagnostics, Service
{}

/// Device bindings (docs/protocol.md §4.1 `DeviceBinding`, §9 Web Push) and the wallets' public keys.
public protocol BindingStore: Sendable {
    /// Applies a verified device binding change and records its nonce, atomically: both or neither.
    func apply(_ change: DeviceChange) async throws -> DeviceChangeOutcome

    /// The public key recovered from the wallet's verified signatures, if any.
    func publicKey(of wallet: EthereumAddress) async throws -> PublicKey?

    /// Remembers a wallet's public key from a verified signature that changed nothing else (FeedAccess).
    func rememberPublicKey(_ key: PublicKey, of wallet: EthereumAddress, now: Int64) async throws

    /// Every binding of a wallet, oldest first.
    func bindings(of wallet: EthereumAddress) async throws -> [DeviceBindingRecord]

    /// The keys of a wallet's Web Push binding to `endpoint` (docs/protocol.md §9), read when its push is
    /// sent so that a re-registration's new keys apply to pushes already queued; nil without one.
    func webPushSubscription(of wallet: EthereumAddress, endpoint: String) async throws -> WebPushSubscription?

    /// Total number of bindings (for metrics and operators).
    func bindingCount() async throws -> Int

    /// Deletes every binding of a dead device token (any wallet); its queued pushes are dropped when
    /// they come due. Returns how many bindings were deleted.
    func removeBindings(platform: Platform, deviceToken: String) async throws -> Int
}

/// Channels (operators' `herald channel add`) and who subscribes to them.
public protocol ChannelStore: Sendable {
    /// Applies a verified subscribe / unsubscribe and records its nonce, atomically.
    func apply(_ change: SubscriptionChange) async throws -> SubscriptionChangeOutcome

    /// Adds or updates a channel (operators, `herald channel add`).
    func saveChannel(_ channel: ChannelRecord) async throws

    /// Removes a channel and its subscriptions; false when there was none.
    func removeChannel(_ address: EthereumAddress) async throws -> Bool

    func channel(_ address: EthereumAddress) async throws -> ChannelRecord?

    func channels() async throws -> [ChannelRecord]

    func subscriberCount(of channel: EthereumAddress) async throws -> Int

    /// A subscriber's subscriptions, oldest first.
    func subscriptions(of subscriber: EthereumAddress) async throws -> [SubscriptionRecord]
}

/// Notifications and the feeds they fill.
public protocol NotificationStore: Sendable {
    /// Stores a verified notification: items, outbox rows and the spent nonce in one transaction.
    func submit(_ notification: NotificationSubmission) async throws -> NotificationOutcome

    /// A page of a wallet's feed, newest first (`sid` descending), with the size of the whole set.
    func feed(of wallet: EthereumAddress, spam: Bool, limit: Int, offset: Int) async throws -> FeedPage

    /// A feed item's sender, recipient and the state of each of its pushes; nil for an unknown sid.
    func pushReport(sid: Int64) async throws -> PushReport?
}

/// The push outbox: durable rows, claimed with leases by the workers of every node.
public protocol OutboxStore: Sendable {
    /// Claims up to `limit` queued pushes due at `now` (of `platforms`, when given) for `owner` until
    /// `leaseUntil` (Unix seconds), oldest first: no other claim returns them until the lease passes or
    /// their outcome is recorded. This is how several workers, on one node or many, share one outbox
    /// without sending a push twice; a worker that dies holding claims gives them up when its lease ends.
    /// With `after`, only pushes past that position in the claims' order (`OutboxPosition`) are looked at:
    /// a lane that keeps where its last claim ended does not walk again past the pushes it holds in flight.
    func claimDuePushes(
        now: Int64, limit: Int, platforms: Set<Platform>?, owner: String, leaseUntil: Int64, after: OutboxPosition?
    )
        async throws -> [QueuedPush]

    /// Records what delivery attempts did, in one transaction, and ends their claims. With `owner`, only
    /// pushes that node still holds are touched: a send that outlived its lease, while another node
    /// claimed the push again, must not clear that node's claim or overwrite its outcome.
    func record(_ results: [PushAttemptResult], owner: String?) async throws

    /// Pushes still queued (the outbox's depth), counted on its partial index.
    func queuedPushCount() async throws -> Int

    /// Outbox rows by status (`queued`, `sent`, `failed`, `pruned`), for metrics and operators.
    func pushCounts() async throws -> [String: Int]

    /// Queues a Bisq relay push (docs/protocol.md §8), durably, with no binding and no feed item; returns its
    /// outbox id.
    func queueBisqPush(_ push: BisqRelayPush) async throws -> Int64

    /// Where one outbox row stands (for the Bisq POST routes, which wait for the first attempt); nil for
    /// an unknown id.
    func pushState(id: Int64) async throws -> PushState?
}

extension OutboxStore {
    /// A claim from the start of the outbox's order.
    public func claimDuePushes(
        now: Int64, limit: Int, platforms: Set<Platform>?, owner: String, leaseUntil: Int64
    ) async throws -> [QueuedPush] {
        try await claimDuePushes(
            now: now, limit: limit, platforms: platforms, owner: owner, leaseUntil: leaseUntil, after: nil)
    }
}

/// What the pruning service and the server's start and end need.
public protocol MaintenanceStore: Sendable {
    /// Readies the store for `herald serve`, before its workers start. SQLite (one server per file, a
    /// lock held while it serves) voids claims an earlier run of the server left when it was killed, so
    /// that their pushes go now rather than once their lease passed; returns how many. PostgreSQL, shared
    /// by several live nodes, voids nothing.
    func prepareToServe() async throws -> Int

    /// Forgets nonces whose operations can no longer be valid (`expiresAt + skew < now`).
    func pruneNonces(expiredBefore cutoff: Int64) async throws -> Int

    /// Deletes bindings not refreshed since `cutoff` (Unix seconds).
    func pruneBindings(lastSeenBefore cutoff: Int64) async throws -> Int

    /// Deletes outbox rows that are finished (sent, failed, pruned) and were queued before `cutoff`.
    /// Queued pushes are never deleted here, however old.
    func pruneFinishedPushes(queuedBefore cutoff: Int64) async throws -> Int

    /// Throws when storage does not answer (for `GET /healthz`).
    func checkHealth() async throws

    /// Flushes and closes. Further calls fail with `StoreError.storeClosed`.
    func close() async throws
}

/// The engine's own figures, for `/metrics`; nothing in them is part of the contract's behaviour.
public protocol StoreDiagnostics: Sendable {
    /// What the group-commit writer has done since the store opened.
    var writerStatistics: WriterStatistics.Snapshot { get }
}

/// What tests read to look at the outbox without claiming it. Not part of the contract the server uses.
package protocol OutboxInspection: Sendable {
    /// Queued pushes due at `now` (Unix seconds), oldest first, at most `limit`; only those for
    /// `platforms` when given.
    func duePushes(now: Int64, limit: Int, platforms: Set<Platform>?) async throws -> [QueuedPush]
}

/// A device binding as stored.
public struct DeviceBindingRecord: Sendable, Hashable {
    public let wallet: EthereumAddress
    public let platform: Platform
    /// Normalised (APNs tokens lowercased).
    public let deviceToken: String
    public let createdAt: Int64
    public let lastSeen: Int64

    public init(wallet: EthereumAddress, platform: Platform, deviceToken: String, createdAt: Int64, lastSeen: Int64) {
        self.wallet = wallet
        self.platform = platform
        self.deviceToken = deviceToken
        self.createdAt = createdAt
        self.lastSeen = lastSeen
    }
}

/// A verified DeviceBinding, ready to apply.
public struct DeviceChange: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        case register
        case unregister
    }

    public let action: Action
    public let wallet: EthereumAddress
    public let platform: Platform
    /// Normalised (APNs tokens lowercased).
    public let deviceToken: String
    /// The signer's recovered public key, remembered for `GET /v1/users/{wallet}/pubkey`.
    public let publicKey: PublicKey
    /// The replay nonce: (wallet, nonce) is accepted once across all operation types.
    public let nonce: UInt256
    /// What was signed: with the nonce, the operation's identity (docs/protocol.md §11.2).
    public let operation: OperationDigest
    /// Unix seconds after which the nonce may be forgotten (`expiresAt + skew`).
    public let nonceRetainedUntil: Int64
    /// The server clock when the change was verified.
    public let now: Int64
    /// A wallet may hold at most this many bindings; a new one past it is refused.
    public let maxBindingsPerWallet: Int
    /// Whether a register that creates the binding queues the setup confirmation push (§4.3).
    public let queueSetupConfirmation: Bool
    /// A Web Push binding's subscription (platform `webpush`, token the endpoint): a register stores
    /// its keys, replacing older ones (docs/protocol.md §9).
    public let webPush: WebPushSubscription?

    public init(
        action: Action, wallet: EthereumAddress, platform: Platform, deviceToken: String, publicKey: PublicKey,
        nonce: UInt256, operation: OperationDigest, nonceRetainedUntil: Int64, now: Int64, maxBindingsPerWallet: Int,
        queueSetupConfirmation: Bool = false, webPush: WebPushSubscription? = nil
    ) {
        self.operation = operation
        self.webPush = webPush
        self.queueSetupConfirmation = queueSetupConfirmation
        self.action = action
        self.wallet = wallet
        self.platform = platform
        self.deviceToken = deviceToken
        self.publicKey = publicKey
        self.nonce = nonce
        self.nonceRetainedUntil = nonceRetainedUntil
        self.now = now
        self.maxBindingsPerWallet = maxBindingsPerWallet
    }
}

/// What applying a change did.
public enum DeviceChangeOutcome: Sendable, Hashable {
    /// The binding exists now; `created` is false when an existing one was refreshed.
    case registered(created: Bool)
    /// The binding existed and was removed.
    case unregistered
    /// An unregister of a binding that did not exist (the nonce is still spent).
    case absent
    /// The (signer, nonce) pair was already used by another operation: nothing changed.
    case replayed
    /// A new binding would exceed the wallet's limit: nothing changed.
    case overLimit
    /// The same operation again (docs/protocol.md §11.2): nothing changed; the first copy's outcome, answered
    /// again with `Idempotent-Replay: true`.
    indirect case repeated(DeviceChangeOutcome)
}

extension OutboxStore {
    /// Records outcomes whoever holds the claims (tests, tools).
    public func record(_ results: [PushAttemptResult]) async throws {
        try await record(results, owner: nil)
    }
}

extension OutboxInspection {
    /// Due pushes of every platform.
    package func duePushes(now: Int64, limit: Int) async throws -> [QueuedPush] {
        try await duePushes(now: now, limit: limit, platforms: nil)
    }
}
