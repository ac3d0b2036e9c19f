import HeraldCore
import HeraldRelay
import Logging

/// Every setting of `herald serve`, in CLI.md's order: the one place each is spelled (file key, flag,
/// environment variable) and checked. docs/configuration.md documents them.
enum SettingTable {
    static let all: [Setting] =
        general + limits + push + senderLimits + apns + fcm + upstream + webpush + webhooks + bisq + log

    private static let general: [Setting] = [
        Setting("host", flag: "host", environment: "HERALD_HOST") { config, lookup throws(ConfigurationError) in
            if let host = try lookup.text() { config.http.host = host }
        },
        Setting("port", flag: "port", environment: "HERALD_PORT") { config, lookup throws(ConfigurationError) in
            if let port = try lookup.integer(in: 0...65535) { config.http.port = port }
        },
        Setting("database", flag: "database", environment: "HERALD_DATABASE") {
            config, lookup throws(ConfigurationError) in
            if let database = try lookup.text() { config.database.path = database }
        },
        Setting("databasePoolSize", flag: "database-pool-size", environment: "HERALD_DATABASE_POOL_SIZE") {
            config, lookup throws(ConfigurationError) in
            if let size = try lookup.integer(in: 1...1000) { config.database.poolSize = size }
        },
        Setting(
            "databaseConnectTimeoutSeconds", flag: "database-connect-timeout",
            environment: "HERALD_DATABASE_CONNECT_TIMEOUT"
        ) { config, lookup throws(ConfigurationError) in
            if let seconds = try lookup.integer(in: 1...600) { config.database.connectTimeoutSeconds = seconds }
        },
        Setting("audience", flag: "audience", environment: "HERALD_AUDIENCE") {
            config, lookup throws(ConfigurationError) in
            if let audience = try lookup.text() { config.operations.audience = audience }
        },
        Setting("chainId", flag: "chain-id", environment: "HERALD_CHAIN_ID") {
            config, lookup throws(ConfigurationError) in
            let chain = try lookup.parsed("must be a positive decimal integer") {
                UInt256(decimal: $0, canonical: true).flatMap { $0 == .zero ? nil : $0 }
            }
            if let chain { config.operations.chainId = chain }
        },
        Setting("maxValiditySeconds", flag: "max-validity", environment: "HERALD_MAX_VALIDITY") {
            config, lookup throws(ConfigurationError) in
            if let seconds = try lookup.integer(in: 1...86_400) {
                config.operations.maxValiditySeconds = Int64(seconds)
            }
        },
        Setting("clockSkewSeconds", flag: "clock-skew", environment: "HERALD_CLOCK_SKEW") {
            config, lookup throws(ConfigurationError) in
            if let seconds = try lookup.integer(in: 0...3600) { config.operations.clockSkewSeconds = Int64(seconds) }
        },
    ]

    private static let limits: [Setting] = [
        Setting("rateLimit", flag: "rate-limit", environment: "HERALD_RATE_LIMIT") {
            config, lookup throws(ConfigurationError) in
            let rate = try lookup.number("must be a number of requests per second, 0 to turn limiting off") {
                $0 >= 0 && $0 <= 1_000_000
            }
            if let rate { config.http.rateLimit = rate }
        },
        Setting("rateBurst", flag: "rate-burst", environment: "HERALD_RATE_BURST") {
            config, lookup throws(ConfigurationError) in
            if let burst = try lookup.integer(in: 1...10_000_000) { config.http.rateBurst = burst }
        },
        Setting("trustedProxies", flag: "trusted-proxy", environment: "HERALD_TRUSTED_PROXY", isList: true) {
            config, lookup throws(ConfigurationError) in
            guard let parts = try lookup.list("must be a list of addresses or CIDRs") else { return }
            var networks: [CIDR] = []
            for part in parts {
                guard let network = CIDR(part) else { throw lookup.invalid("\"\(part)\" is not an address or CIDR") }
                networks.append(network)
            }
            config.http.trustedProxies = networks
        },
        Setting(
            "rateLimitIpv6Prefix", flag: "rate-limit-ipv6-prefix", environment: "HERALD_RATE_LIMIT_IPV6_PREFIX"
        ) { config, lookup throws(ConfigurationError) in
            if let bits = try lookup.integer(in: 48...128) { config.http.rateLimitIpv6Prefix = bits }
        },
        Setting("bodyLimit", flag: "body-limit", environment: "HERALD_BODY_LIMIT") {
            config, lookup throws(ConfigurationError) in
            if let limit = try lookup.integer(in: 1024...(16 << 20)) { config.http.bodyLimit = limit }
        },
        Setting("requestTimeoutSeconds", flag: "request-timeout", environment: "HERALD_REQUEST_TIMEOUT") {
            config, lookup throws(ConfigurationError) in
            if let seconds = try lookup.integer(in: 1...3600) { config.http.requestTimeoutSeconds = seconds }
        },
        Setting("maxConnections", flag: "max-connections", environment: "HERALD_MAX_CONNECTIONS") {
            config, lookup throws(ConfigurationError) in
            if let count = try lookup.integer(in: 1...1_000_000) { config.http.maxConnections = count }
        },
        Setting("maxBindingsPerWallet", flag: "max-bindings", environment: "HERALD_MAX_BINDINGS") {
            config, lookup throws(ConfigurationError) in
            if let count = try lookup.integer(in: 1...10_000) { config.bindings.maxPerWallet = count }
        },
        Setting("bindingExpiryDays", flag: "binding-expiry-days", environment: "HERALD_BINDING_EXPIRY_DAYS") {
            config, lookup throws(ConfigurationError) in
            if let days = try lookup.integer(in: 1...36_500) { config.bindings.expiryDays = days }
        },
        Setting("retention.feedDays", flag: "retention-feed-days", environment: "HERALD_RETENTION_FEED_DAYS") {
            config, lookup throws(ConfigurationError) in
            if let days = try lookup.integer(in: 0...36_500) { config.retention.feedDays = days }
        },
        Setting(
            "retention.feedItemsPerWallet", flag: "retention-feed-items", environment: "HERALD_RETENTION_FEED_ITEMS"
        ) { config, lookup throws(ConfigurationError) in
            if let count = try lookup.integer(in: 0...100_000_000) { config.retention.feedItemsPerWallet = count }
        },
    ]

    private static let push: [Setting] = [
        Setting("push.attempts", flag: "push-attempts", environment: "HERALD_PUSH_ATTEMPTS") {
            config, lookup throws(ConfigurationError) in
            if let attempts = try lookup.integer(in: 1...100) { config.push.attempts = attempts }
        },
        Setting("push.maxAgeSeconds", flag: "push-max-age", environment: "HERALD_PUSH_MAX_AGE") {
            config, lookup throws(ConfigurationError) in
            if let seconds = try lookup.integer(in: 60...(30 * 86_400)) { config.push.maxAgeSeconds = Int64(seconds) }
        },
        Setting("push.concurrency", flag: "push-concurrency", environment: "HERALD_PUSH_CONCURRENCY") {
            config, lookup throws(ConfigurationError) in
            if let count = try lookup.integer(in: 1...10_000) { config.push.concurrency = count }
        },
        Setting("push.leaseSeconds", flag: "push-lease", environment: "HERALD_PUSH_LEASE") {
            config, lookup throws(ConfigurationError) in
            if let seconds = try lookup.integer(in: 5...3600) { config.push.leaseSeconds = Int64(seconds) }
        },
        Setting("push.content", flag: "push-content", environment: "HERALD_PUSH_CONTENT") {
            config, lookup throws(ConfigurationError) in
            if let mode = try lookup.parsed("must be full or none", PushContent.Mode.init(rawValue:)) {
                config.push.content = mode
            }
        },
        Setting("push.setupConfirmation", flag: "setup-confirmation", environment: "HERALD_SETUP_CONFIRMATION") {
            config, lookup throws(ConfigurationError) in
            if let enabled = try lookup.boolean() { config.push.setupConfirmation = enabled }
        },
        Setting("push.badge", flag: "push-badge", environment: "HERALD_PUSH_BADGE") {
            config, lookup throws(ConfigurationError) in
            if let enabled = try lookup.boolean() { config.push.badge = enabled }
        },
        Setting("push.readSync", flag: "push-read-sync", environment: "HERALD_PUSH_READ_SYNC") {
            config, lookup throws(ConfigurationError) in
            if let enabled = try lookup.boolean() { config.push.readSync = enabled }
        },
    ]

    /// docs/protocol.md §10: what one channel may put into wallets' feeds.
    private static let senderLimits: [Setting] = [
        Setting(
            "limits.channelWalletPerHour", flag: "limits-channel-wallet-per-hour",
            environment: "HERALD_LIMITS_CHANNEL_WALLET_PER_HOUR"
        ) { config, lookup throws(ConfigurationError) in
            if let rate = try lookup.integer(in: 0...3_600_000) { config.limits.channelWalletPerHour = rate }
        },
        Setting(
            "limits.channelWalletBurst", flag: "limits-channel-wallet-burst",
            environment: "HERALD_LIMITS_CHANNEL_WALLET_BURST"
        ) { config, lookup throws(ConfigurationError) in
            if let burst = try lookup.integer(in: 0...1_000_000) { config.limits.channelWalletBurst = burst }
        },
        Setting(
            "limits.channelBroadcastsPerHour", flag: "limits-channel-broadcasts-per-hour",
            environment: "HERALD_LIMITS_CHANNEL_BROADCASTS_PER_HOUR"
        ) { config, lookup throws(ConfigurationError) in
            if let rate = try lookup.integer(in: 0...3_600_000) { config.limits.channelBroadcastsPerHour = rate }
        },
    ]

    private static let apns: [Setting] = [
        Setting("apns.keyFile", flag: "apns-key-file", environment: "HERALD_APNS_KEY_FILE") {
            config, lookup throws(ConfigurationError) in config.apns.keyFile = try lookup.text() ?? config.apns.keyFile
        },
        Setting("apns.keyId", flag: "apns-key-id", environment: "HERALD_APNS_KEY_ID") {
            config, lookup throws(ConfigurationError) in config.apns.keyID = try lookup.text() ?? config.apns.keyID
        },
        Setting("apns.teamId", flag: "apns-team-id", environment: "HERALD_APNS_TEAM_ID") {
            config, lookup throws(ConfigurationError) in config.apns.teamID = try lookup.text() ?? config.apns.teamID
        },
        Setting("apns.topic", flag: "apns-topic", environment: "HERALD_APNS_TOPIC") {
            config, lookup throws(ConfigurationError) in config.apns.topic = try lookup.text() ?? config.apns.topic
        },
        Setting("apns.host", flag: "apns-host", environment: "HERALD_APNS_HOST") {
            config, lookup throws(ConfigurationError) in config.apns.host = try lookup.url() ?? config.apns.host
        },
        Setting("apns.sandboxHost", flag: "apns-sandbox-host", environment: "HERALD_APNS_SANDBOX_HOST") {
            config, lookup throws(ConfigurationError) in
            config.apns.sandboxHost = try lookup.url() ?? config.apns.sandboxHost
        },
        Setting("apns.caFile", flag: "apns-ca-file", environment: "HERALD_APNS_CA_FILE") {
            config, lookup throws(ConfigurationError) in config.apns.caFile = try lookup.text() ?? config.apns.caFile
        },
    ]

    private static let fcm: [Setting] = [
        Setting("fcm.serviceAccountFile", flag: "fcm-service-account", environment: "HERALD_FCM_SERVICE_ACCOUNT") {
            config, lookup throws(ConfigurationError) in
            config.fcm.serviceAccountFile = try lookup.text() ?? config.fcm.serviceAccountFile
        },
        Setting("fcm.projectId", flag: "fcm-project-id", environment: "HERALD_FCM_PROJECT_ID") {
            config, lookup throws(ConfigurationError) in
            config.fcm.projectID = try lookup.text() ?? config.fcm.projectID
        },
        Setting("fcm.endpoint", flag: "fcm-endpoint", environment: "HERALD_FCM_ENDPOINT") {
            config, lookup throws(ConfigurationError) in config.fcm.endpoint = try lookup.url() ?? config.fcm.endpoint
        },
        Setting("fcm.tokenUri", flag: "fcm-token-uri", environment: "HERALD_FCM_TOKEN_URI") {
            config, lookup throws(ConfigurationError) in config.fcm.tokenURI = try lookup.url() ?? config.fcm.tokenURI
        },
        Setting("fcm.caFile", flag: "fcm-ca-file", environment: "HERALD_FCM_CA_FILE") {
            config, lookup throws(ConfigurationError) in config.fcm.caFile = try lookup.text() ?? config.fcm.caFile
        },
    ]

    private static let upstream: [Setting] = [
        Setting("upstream.url", flag: "upstream", environment: "HERALD_UPSTREAM_URL") {
            config, lookup throws(ConfigurationError) in config.upstream.url = try lookup.url() ?? config.upstream.url
        },
        Setting(
            "upstream.installationId", flag: "upstream-installation-id", environment: "HERALD_UPSTREAM_INSTALLATION_ID"
        ) {
            config, lookup throws(ConfigurationError) in
            config.upstream.installationID = try lookup.text() ?? config.upstream.installationID
        },
        Setting(
            "upstream.installationKeyFile", flag: "upstream-installation-key-file",
            environment: "HERALD_UPSTREAM_INSTALLATION_KEY_FILE"
        ) {
            config, lookup throws(ConfigurationError) in
            config.upstream.installationKeyFile = try lookup.text() ?? config.upstream.installationKeyFile
        },
        Setting("upstream.caFile", flag: "upstream-ca-file", environment: "HERALD_UPSTREAM_CA_FILE") {
            config, lookup throws(ConfigurationError) in
            config.upstream.caFile = try lookup.text() ?? config.upstream.caFile
        },
    ]

    private static let webpush: [Setting] = [
        Setting("webpush.vapidKeyFile", flag: "webpush-vapid-key-file", environment: "HERALD_WEBPUSH_VAPID_KEY_FILE") {
            config, lookup throws(ConfigurationError) in
            config.webpush.vapidKeyFile = try lookup.text() ?? config.webpush.vapidKeyFile
        },
        Setting("webpush.subject", flag: "webpush-subject", environment: "HERALD_WEBPUSH_SUBJECT") {
            config, lookup throws(ConfigurationError) in
            let subject = try lookup.parsed("must be a mailto: or https: URI") { text in
                (text.hasPrefix("mailto:") && text.count > 7) || (text.hasPrefix("https://") && text.count > 8)
                    ? text : nil
            }
            config.webpush.subject = subject ?? config.webpush.subject
        },
        Setting(
            "webpush.allowNetworks", flag: "webpush-allow-network", environment: "HERALD_WEBPUSH_ALLOW_NETWORKS",
            isList: true
        ) { config, lookup throws(ConfigurationError) in
            if let networks = try lookup.networks() { config.webpush.allowNetworks = networks }
        },
        Setting("webpush.caFile", flag: "webpush-ca-file", environment: "HERALD_WEBPUSH_CA_FILE") {
            config, lookup throws(ConfigurationError) in
            config.webpush.caFile = try lookup.text() ?? config.webpush.caFile
        },
        Setting(
            "webpush.originConcurrency", flag: "webpush-origin-concurrency",
            environment: "HERALD_WEBPUSH_ORIGIN_CONCURRENCY"
        ) { config, lookup throws(ConfigurationError) in
            if let count = try lookup.integer(in: 1...10_000) { config.webpush.originConcurrency = count }
        },
        Setting(
            "webpush.resolveTimeoutSeconds", flag: "webpush-resolve-timeout",
            environment: "HERALD_WEBPUSH_RESOLVE_TIMEOUT"
        ) { config, lookup throws(ConfigurationError) in
            if let seconds = try lookup.integer(in: 1...60) { config.webpush.resolveTimeoutSeconds = seconds }
        },
    ]

    private static let webhooks: [Setting] = [
        Setting(
            "webhooks.allowNetworks", flag: "webhooks-allow-network", environment: "HERALD_WEBHOOKS_ALLOW_NETWORKS",
            isList: true
        ) { config, lookup throws(ConfigurationError) in
            if let networks = try lookup.networks() { config.webhooks.allowNetworks = networks }
        },
        Setting("webhooks.maxAgeSeconds", flag: "webhooks-max-age", environment: "HERALD_WEBHOOKS_MAX_AGE") {
            config, lookup throws(ConfigurationError) in
            if let seconds = try lookup.integer(in: 60...2_592_000) { config.webhooks.maxAgeSeconds = Int64(seconds) }
        },
        Setting("webhooks.caFile", flag: "webhooks-ca-file", environment: "HERALD_WEBHOOKS_CA_FILE") {
            config, lookup throws(ConfigurationError) in
            config.webhooks.caFile = try lookup.text() ?? config.webhooks.caFile
        },
    ]

    private static let bisq: [Setting] = [
        Setting("bisq.relay", flag: "bisq-relay", environment: "HERALD_BISQ_RELAY", isSwitch: true) {
            config, lookup throws(ConfigurationError) in
            if let enabled = try lookup.boolean() { config.bisq.relay = enabled }
        }
    ]

    private static let log: [Setting] = [
        Setting("log.level", flag: "log-level", environment: "HERALD_LOG_LEVEL") {
            config, lookup throws(ConfigurationError) in
            let level = try lookup.parsed("must be one of trace, debug, info, notice, warning, error, critical") {
                Logger.Level(rawValue: $0.lowercased())
            }
            if let level { config.log.level = level }
        },
        Setting("log.format", flag: "log-format", environment: "HERALD_LOG_FORMAT") {
            config, lookup throws(ConfigurationError) in
            if let format = try lookup.parsed("must be text or json", HeraldSettings.LogFormat.init(rawValue:)) {
                config.log.format = format
            }
        },
    ]
}
