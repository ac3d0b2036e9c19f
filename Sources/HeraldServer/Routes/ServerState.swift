import Foundation
public import HeraldCore
public import HeraldStore
public import Logging

/// What every handler needs, built once at start.
public struct ServerState: Sendable {
    public let configuration: HeraldSettings
    public let store: any HeraldStore
    public let verifier: OperationVerifier
    public let metrics: ServerMetrics
    /// Unix seconds. Injected so that tests control time without sleeping.
    public let clock: @Sendable () -> Int64
    /// Unix milliseconds, for item epochs: the real clock, or the injected one's seconds × 1000.
    public let millisecondClock: @Sendable () -> Int64
    public let logger: Logger
    /// The version this server reports in `/v1/info`.
    public let version: String
    /// Poked when pushes are queued, so that the outbox worker sends them at once.
    public let pushWakeup = PushWakeup()
    /// Woken by the outbox service when it has recorded outcomes, for requests waiting on them.
    public let pushOutcomes = PushOutcomeWaiters()
    /// Names this process in the outbox's claims (`claimed_by`), for operators reading the table.
    public let nodeID = "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)"
    /// The token buckets of `rateLimit`, nil when it is 0: one set for the router's middleware and
    /// `DeviceRouteFastPath`.
    let rateLimiter: RateLimiter?
    /// Signs webhook deliveries (docs/protocol.md §11.3); its address is `/v1/info`'s `webhookSigner`.
    /// `herald serve` passes the key kept in the database (``loadWebhookKey(from:)``), so that every node
    /// signs with it; without one a process has a key of its own (tests, tools).
    public let webhookKey: PrivateKey

    public init(
        configuration: HeraldSettings, store: any HeraldStore, metrics: ServerMetrics = ServerMetrics(),
        logger: Logger = Logger(label: "herald"), version: String = "0.1.0",
        clock: (@Sendable () -> Int64)? = nil, webhookKey: PrivateKey = .generate()
    ) {
        self.webhookKey = webhookKey
        self.configuration = configuration
        self.store = store
        self.verifier = configuration.verifier
        self.metrics = metrics
        self.clock = clock ?? { Int64(Date().timeIntervalSince1970) }
        if let clock {
            self.millisecondClock = { clock() * 1000 }
        } else {
            self.millisecondClock = { Int64(Date().timeIntervalSince1970 * 1000) }
        }
        self.logger = logger
        self.version = version
        self.rateLimiter =
            configuration.http.rateLimit > 0
            ? RateLimiter(
                rate: configuration.http.rateLimit, burst: configuration.http.rateBurst,
                ipv6Prefix: configuration.http.rateLimitIpv6Prefix) : nil
    }

    /// The webhook key kept in the database: the one stored, or a new one stored now (the first node to
    /// start makes it).
    public static func loadWebhookKey(from store: any WebhookStore) async throws -> PrivateKey {
        let bytes = try await store.webhookKey(generated: PrivateKey.generate().rawBytes)
        do { return try PrivateKey(bytes: bytes) } catch {
            throw StoreError(.corrupt, "the stored webhook key is not a secp256k1 private key")
        }
    }

    /// The verifier, clocks and nonce retention every signed route shares.
    var signedRequests: SignedRequests {
        SignedRequests(
            verifier: verifier, metrics: metrics, clock: clock, millisecondClock: millisecondClock,
            clockSkewSeconds: configuration.operations.clockSkewSeconds)
    }
}
