public import HeraldCore
public import HeraldRelay
public import HeraldStore
public import Logging

/// Everything `herald serve` can be told (CLI.md, "Server options"), with its defaults, in scopes: each
/// part of the server takes the scope it needs once, when it is built (the HTTP server `http`, the store
/// `database`, the routes `operations` and `bindings`, the outbox `push`, pruning `retention`, each push
/// service its own), rather than reading one flat bag of settings wherever it likes.
public struct HeraldSettings: Sendable, Equatable {
    public enum LogFormat: String, Sendable, Equatable {
        case text, json
    }

    public var http = HTTPSettings()
    public var database = DatabaseSettings()
    public var operations = OperationSettings()
    public var bindings = BindingSettings()
    public var retention = RetentionSettings()
    public var push = PushSettings()
    public var limits = SenderLimitSettings()
    public var apns = APNsSettings()
    public var fcm = FCMSettings()
    public var upstream = UpstreamSettings()
    public var webpush = WebPushSettings()
    public var webhooks = WebhookSettings()
    public var bisq = BisqSettings()
    public var log = LogSettings()

    public init() {}

    /// The listener, and what every request is held to.
    public struct HTTPSettings: Sendable, Equatable {
        public var host = "127.0.0.1"
        public var port = 8080
        /// Requests per second per client IP on POST routes and FeedAccess reads (one bucket); 0 turns
        /// limiting off.
        public var rateLimit: Double = 50
        public var rateBurst = 200
        /// Proxies whose `X-Forwarded-For` is believed.
        public var trustedProxies: [CIDR] = []
        /// IPv6 clients share one bucket per prefix of this many bits (48–128).
        public var rateLimitIpv6Prefix = 64
        public var bodyLimit = 65_536
        /// A request must arrive whole within this many seconds of its connection being ready for it.
        public var requestTimeoutSeconds = 30
        /// Connections open at once; one more is closed at once.
        public var maxConnections = 4096
        /// `POST /v1/notifications` carries up to 1000 recipients' secrets: 512 KiB, or `bodyLimit` if
        /// larger.
        public var notificationBodyLimit: Int { max(bodyLimit, 512 * 1024) }

        public init() {}
    }

    /// Where the data lives.
    public struct DatabaseSettings: Sendable, Equatable {
        /// A SQLite file path, or a `postgres://` URL (several nodes on one database).
        public var path = "./herald-data/herald.sqlite"
        /// Connections per node to PostgreSQL.
        public var poolSize = 16
        /// How long a node waits for PostgreSQL at start before it gives up (exit 1).
        public var connectTimeoutSeconds = 10

        public init() {}
    }

    /// What a signed operation must name and how long it may live (docs/protocol.md §2).
    public struct OperationSettings: Sendable, Equatable {
        /// nil: `http://<host>:<port>`.
        public var audience: String?
        public var chainId = UInt256(1)
        public var maxValiditySeconds: Int64 = 600
        public var clockSkewSeconds: Int64 = 60

        public init() {}
    }

    /// Device bindings (docs/protocol.md §4).
    public struct BindingSettings: Sendable, Equatable {
        public var maxPerWallet = 20
        /// Bindings not refreshed for this many days are pruned, and so are the keys of wallets left with
        /// no binding, subscription or feed item for as long.
        public var expiryDays = 270

        public init() {}
    }

    /// How long feeds are kept.
    public struct RetentionSettings: Sendable, Equatable {
        /// Feed items older than this many days are pruned (with notifications left without items); 0
        /// keeps them.
        public var feedDays = 365
        /// A wallet keeps at most its newest this many feed items; 0 keeps all.
        public var feedItemsPerWallet = 10_000

        public init() {}
    }

    /// The push outbox (docs/protocol.md §4.3).
    public struct PushSettings: Sendable, Equatable {
        /// Sends per push, the first included, before it fails.
        public var attempts = 8
        /// A push older than this (seconds since queued) fails unsent.
        public var maxAgeSeconds: Int64 = 86_400
        /// Pushes in flight per provider.
        public var concurrency = 100
        /// How long a worker's claim on a due push lasts (several nodes share one outbox).
        public var leaseSeconds: Int64 = 60
        /// How long one send may take: three quarters of the lease, at most 30 s, so that every send ends
        /// while this node still holds its claim (derived, so no setting can break it).
        public var sendDeadline: Duration { .milliseconds(min(30_000, leaseSeconds * 750)) }
        /// `full`: pushes carry the message; `none`: wake-up pushes only.
        public var content: PushContent.Mode = .full
        /// Queue a confirmation push when a register creates a binding.
        public var setupConfirmation = true
        /// APNs notification pushes carry `aps.badge`, the wallet's unread count (docs/protocol.md §10).
        public var badge = true
        /// A read mark queues badge-only APNs pushes and FCM `read` messages to the wallet's devices.
        public var readSync = true

        public init() {}
    }

    /// What one channel may put into wallets' feeds (docs/protocol.md §10); 0 turns a limit off.
    public struct SenderLimitSettings: Sendable, Equatable {
        /// Items a channel may store per recipient an hour (types 2–4).
        public var channelWalletPerHour = 60
        /// How many of them at once.
        public var channelWalletBurst = 30
        /// Broadcasts a channel may send an hour, burst the same.
        public var channelBroadcastsPerHour = 12

        public init() {}
    }

    /// The rules every send and read mark of this node applies (docs/protocol.md §10).
    public var deliveryPolicy: DeliveryPolicy {
        DeliveryPolicy(
            channelWalletPerHour: Int64(limits.channelWalletPerHour),
            channelWalletBurst: Int64(limits.channelWalletBurst),
            channelBroadcastsPerHour: Int64(limits.channelBroadcastsPerHour), badges: push.badge,
            readSync: push.readSync)
    }

    /// docs/protocol.md §8: Bisq's open relay routes (`GET /relay`, `POST /v1/apns|fcm/device/{token}`).
    public struct BisqSettings: Sendable, Equatable {
        /// Off by default.
        public var relay = false

        public init() {}
    }

    public struct LogSettings: Sendable, Equatable {
        public var level: Logger.Level = .info
        public var format: LogFormat = .text

        public init() {}
    }

    /// An upstream Herald relaying this server's pushes (docs/protocol.md §7); no URL means none.
    public struct UpstreamSettings: Sendable, Equatable {
        public var url: String?
        public var installationID: String?
        public var installationKeyFile: String?
        public var caFile: String?

        public init() {}
    }

    /// Web Push (docs/protocol.md §9): configured when a VAPID key file is; `subject` is then required.
    public struct WebPushSettings: Sendable, Equatable {
        public var vapidKeyFile: String?
        /// A `mailto:` or `https:` URI, the JWT's `sub`.
        public var subject: String?
        /// Networks endpoints may reach despite §9's refused ranges (a LAN distributor, loopback in tests).
        public var allowNetworks: [IPNetwork] = []
        public var caFile: String?
        /// Sends in flight per origin (`https://host[:port]`), within the lane's `push.concurrency`: one
        /// push service, slow or hostile, holds only its own share of the lane.
        public var originConcurrency = 8
        /// How long a name's lookup may take before the send is retried as a network error.
        public var resolveTimeoutSeconds = 5
        /// base64url of the VAPID public point, read from the key file when the settings are loaded:
        /// what `/v1/info` publishes as `vapidPublicKey`.
        public var vapidPublicKey: String?

        public init() {}
    }

    /// Webhooks (docs/protocol.md §11.3): where they may reach, and how long an event may wait.
    public struct WebhookSettings: Sendable, Equatable {
        /// Networks webhook URLs may reach despite §9's refused ranges, and the only hosts an `http://`
        /// webhook may name.
        public var allowNetworks: [IPNetwork] = []
        /// An event not delivered by then is dropped.
        public var maxAgeSeconds: Int64 = 86_400
        /// An extra root for a receiver's certificate.
        public var caFile: String?

        public init() {}

        /// §9's address rules with the operator's networks.
        public var networkPolicy: WebPushNetworkPolicy { WebPushNetworkPolicy(allowed: allowNetworks) }
    }

    /// APNs credentials and hosts; no key file means no APNs.
    public struct APNsSettings: Sendable, Equatable {
        public var keyFile: String?
        public var keyID: String?
        public var teamID: String?
        public var topic: String?
        public var host = "https://api.push.apple.com"
        public var sandboxHost = "https://api.development.push.apple.com"
        public var caFile: String?

        public init() {}
    }

    /// FCM credentials and endpoints; no service account means no FCM.
    public struct FCMSettings: Sendable, Equatable {
        public var serviceAccountFile: String?
        public var projectID: String?
        public var endpoint = "https://fcm.googleapis.com"
        public var tokenURI: String?
        public var caFile: String?

        public init() {}
    }

    /// The audience operations must name: the configured one, or this server's own origin.
    public var effectiveAudience: String {
        if let audience = operations.audience { return audience }
        let hostPart = http.host.contains(":") ? "[\(http.host)]" : http.host
        return "http://\(hostPart):\(http.port)"
    }

    /// The verifier for this configuration.
    public var verifier: OperationVerifier {
        OperationVerifier(
            audience: effectiveAudience, chainId: operations.chainId,
            maxValiditySeconds: operations.maxValiditySeconds, clockSkewSeconds: operations.clockSkewSeconds)
    }
}

/// An IPv4 or IPv6 network in CIDR notation (`10.0.0.0/8`, `::1/128`); a bare address is a /32 or /128.
public struct CIDR: Sendable, Equatable, CustomStringConvertible {
    public let address: [UInt8]
    public let prefixLength: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let bytes = IPAddress.parse(String(first)) else { return nil }
        let length: Int
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...(bytes.count * 8)).contains(parsed) else { return nil }
            length = parsed
        } else {
            length = bytes.count * 8
        }
        address = bytes
        prefixLength = length
    }

    public func contains(_ candidate: [UInt8]) -> Bool {
        guard candidate.count == address.count else { return false }
        var remaining = prefixLength
        for (a, b) in zip(address, candidate) {
            if remaining <= 0 { return true }
            let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
            if a & mask != b & mask { return false }
            remaining -= 8
        }
        return true
    }

    public var description: String { "\(IPAddress.format(address))/\(prefixLength)" }
}
