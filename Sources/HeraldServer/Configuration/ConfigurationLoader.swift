import HeraldCore
import HeraldRelay
import Logging

/// A configuration value that could not be used: the CLI prints it and exits 64.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// Builds a ``ServerConfiguration`` from its four sources, in order of precedence:
/// command-line flags, `HERALD_*` environment variables, a config file (TOML or JSON), defaults.
public enum ConfigurationLoader {
    /// One configuration key and its spellings in each source (CLI.md).
    struct Key: Sendable {
        let flag: String
        let environment: String
        let fileKey: String
        let apply: @Sendable (inout ServerConfiguration, String) throws(ConfigurationError) -> Void
    }

    /// Flag names (without `--`) accepted by `herald serve`, in CLI.md order.
    public static var flagNames: [String] { keys.map(\.flag) }

    /// Merges the sources. `flags` maps a flag name without dashes (`port`) to its value;
    /// `file` holds the config file's flattened keys (`log.level`) and values.
    public static func load(
        flags: [String: String], environment: [String: String], file: [String: String]
    ) throws(ConfigurationError) -> ServerConfiguration {
        let known = Set(keys.map(\.fileKey))
        for key in file.keys.sorted() where !known.contains(key) {
            throw ConfigurationError("unknown key \"\(key)\" in the config file")
        }
        var configuration = ServerConfiguration()
        for key in keys {
            if let value = flags[key.flag] {
                try apply(key, value, source: "--\(key.flag)", to: &configuration)
            } else if let value = environment[key.environment] {
                try apply(key, value, source: key.environment, to: &configuration)
            } else if let value = file[key.fileKey] {
                try apply(key, value, source: "\(key.fileKey) in the config file", to: &configuration)
            }
        }
        try checkPushSettings(configuration)
        return configuration
    }

    /// Reads a config file's text: JSON when it starts with `{`, TOML otherwise.
    public static func parseFile(_ text: String) throws(ConfigurationError) -> [String: String] {
        text.drop { $0.isWhitespace }.first == "{" ? try ConfigFileParser.json(text) : try ConfigFileParser.toml(text)
    }

    private static func apply(
        _ key: Key, _ value: String, source: String, to configuration: inout ServerConfiguration
    ) throws(ConfigurationError) {
        do {
            try key.apply(&configuration, value)
        } catch {
            throw ConfigurationError("\(source): \(error.description)")
        }
    }

    static let keys: [Key] = [
        Key(flag: "host", environment: "HERALD_HOST", fileKey: "host") { config, value throws(ConfigurationError) in
            guard !value.isEmpty else { throw ConfigurationError("must not be empty") }
            config.host = value
        },
        Key(flag: "port", environment: "HERALD_PORT", fileKey: "port") { config, value throws(ConfigurationError) in
            config.port = try integer(value, in: 0...65535)
        },
        Key(flag: "database", environment: "HERALD_DATABASE", fileKey: "database") {
            config, value throws(ConfigurationError) in
            guard !value.isEmpty else { throw ConfigurationError("must not be empty") }
            if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") {
                throw ConfigurationError("PostgreSQL is not supported yet; use a SQLite file path")
            }
            config.databasePath = value
        },
        Key(flag: "audience", environment: "HERALD_AUDIENCE", fileKey: "audience") {
            config, value throws(ConfigurationError) in
            guard !value.isEmpty, !value.contains("\n"), !value.contains("\r") else {
                throw ConfigurationError("must be a non-empty single line")
            }
            config.audience = value
        },
        Key(flag: "chain-id", environment: "HERALD_CHAIN_ID", fileKey: "chainId") {
            config, value throws(ConfigurationError) in
            guard let chain = UInt256(decimal: value, canonical: true), chain != .zero else {
                throw ConfigurationError("must be a positive decimal integer")
            }
            config.chainId = chain
        },
        Key(flag: "max-validity", environment: "HERALD_MAX_VALIDITY", fileKey: "maxValiditySeconds") {
            config, value throws(ConfigurationError) in
            config.maxValiditySeconds = Int64(try integer(value, in: 1...86_400))
        },
        Key(flag: "clock-skew", environment: "HERALD_CLOCK_SKEW", fileKey: "clockSkewSeconds") {
            config, value throws(ConfigurationError) in
            config.clockSkewSeconds = Int64(try integer(value, in: 0...3600))
        },
        Key(flag: "rate-limit", environment: "HERALD_RATE_LIMIT", fileKey: "rateLimit") {
            config, value throws(ConfigurationError) in
            guard let rate = Double(value), rate >= 0, rate <= 1_000_000 else {
                throw ConfigurationError("must be a number of requests per second, 0 to turn limiting off")
            }
            config.rateLimit = rate
        },
        Key(flag: "rate-burst", environment: "HERALD_RATE_BURST", fileKey: "rateBurst") {
            config, value throws(ConfigurationError) in
            config.rateBurst = try integer(value, in: 1...10_000_000)
        },
        Key(flag: "trusted-proxy", environment: "HERALD_TRUSTED_PROXY", fileKey: "trustedProxies") {
            config, value throws(ConfigurationError) in
            var networks: [CIDR] = []
            for part in value.split(separator: ",").map({ String($0).trimmed }) where !part.isEmpty {
                guard let network = CIDR(part) else {
                    throw ConfigurationError("\"\(part)\" is not an address or CIDR")
                }
                networks.append(network)
            }
            config.trustedProxies = networks
        },
        Key(flag: "body-limit", environment: "HERALD_BODY_LIMIT", fileKey: "bodyLimit") {
            config, value throws(ConfigurationError) in
            config.bodyLimit = try integer(value, in: 1024...(16 << 20))
        },
        Key(flag: "request-timeout", environment: "HERALD_REQUEST_TIMEOUT", fileKey: "requestTimeoutSeconds") {
            config, value throws(ConfigurationError) in
            config.requestTimeoutSeconds = try integer(value, in: 1...3600)
        },
        Key(flag: "max-connections", environment: "HERALD_MAX_CONNECTIONS", fileKey: "maxConnections") {
            config, value throws(ConfigurationError) in
            config.maxConnections = try integer(value, in: 1...1_000_000)
        },
        Key(flag: "max-bindings", environment: "HERALD_MAX_BINDINGS", fileKey: "maxBindingsPerWallet") {
            config, value throws(ConfigurationError) in
            config.maxBindingsPerWallet = try integer(value, in: 1...10_000)
        },
        Key(flag: "binding-expiry-days", environment: "HERALD_BINDING_EXPIRY_DAYS", fileKey: "bindingExpiryDays") {
            config, value throws(ConfigurationError) in
            config.bindingExpiryDays = try integer(value, in: 1...36_500)
        },
        Key(flag: "push-attempts", environment: "HERALD_PUSH_ATTEMPTS", fileKey: "push.attempts") {
            config, value throws(ConfigurationError) in
            config.pushAttempts = try integer(value, in: 1...100)
        },
        Key(flag: "push-max-age", environment: "HERALD_PUSH_MAX_AGE", fileKey: "push.maxAgeSeconds") {
            config, value throws(ConfigurationError) in
            config.pushMaxAgeSeconds = Int64(try integer(value, in: 60...(30 * 86_400)))
        },
        Key(flag: "push-concurrency", environment: "HERALD_PUSH_CONCURRENCY", fileKey: "push.concurrency") {
            config, value throws(ConfigurationError) in
            config.pushConcurrency = try integer(value, in: 1...10_000)
        },
        Key(flag: "push-content", environment: "HERALD_PUSH_CONTENT", fileKey: "push.content") {
            config, value throws(ConfigurationError) in
            guard let mode = PushContent.Mode(rawValue: value.trimmed) else {
                throw ConfigurationError("must be full or none")
            }
            config.pushContent = mode
        },
        Key(flag: "setup-confirmation", environment: "HERALD_SETUP_CONFIRMATION", fileKey: "push.setupConfirmation") {
            config, value throws(ConfigurationError) in
            switch value.trimmed.lowercased() {
            case "true", "1", "yes", "on": config.setupConfirmation = true
            case "false", "0", "no", "off": config.setupConfirmation = false
            default: throw ConfigurationError("must be true or false")
            }
        },
        Key(flag: "apns-key-file", environment: "HERALD_APNS_KEY_FILE", fileKey: "apns.keyFile") {
            config, value throws(ConfigurationError) in config.apns.keyFile = try text(value)
        },
        Key(flag: "apns-key-id", environment: "HERALD_APNS_KEY_ID", fileKey: "apns.keyId") {
            config, value throws(ConfigurationError) in config.apns.keyID = try text(value)
        },
        Key(flag: "apns-team-id", environment: "HERALD_APNS_TEAM_ID", fileKey: "apns.teamId") {
            config, value throws(ConfigurationError) in config.apns.teamID = try text(value)
        },
        Key(flag: "apns-topic", environment: "HERALD_APNS_TOPIC", fileKey: "apns.topic") {
            config, value throws(ConfigurationError) in config.apns.topic = try text(value)
        },
        Key(flag: "apns-host", environment: "HERALD_APNS_HOST", fileKey: "apns.host") {
            config, value throws(ConfigurationError) in config.apns.host = try url(value)
        },
        Key(flag: "apns-sandbox-host", environment: "HERALD_APNS_SANDBOX_HOST", fileKey: "apns.sandboxHost") {
            config, value throws(ConfigurationError) in config.apns.sandboxHost = try url(value)
        },
        Key(flag: "apns-ca-file", environment: "HERALD_APNS_CA_FILE", fileKey: "apns.caFile") {
            config, value throws(ConfigurationError) in config.apns.caFile = try text(value)
        },
        Key(flag: "fcm-service-account", environment: "HERALD_FCM_SERVICE_ACCOUNT", fileKey: "fcm.serviceAccountFile") {
            config, value throws(ConfigurationError) in config.fcm.serviceAccountFile = try text(value)
        },
        Key(flag: "fcm-project-id", environment: "HERALD_FCM_PROJECT_ID", fileKey: "fcm.projectId") {
            config, value throws(ConfigurationError) in config.fcm.projectID = try text(value)
        },
        Key(flag: "fcm-endpoint", environment: "HERALD_FCM_ENDPOINT", fileKey: "fcm.endpoint") {
            config, value throws(ConfigurationError) in config.fcm.endpoint = try url(value)
        },
        Key(flag: "fcm-token-uri", environment: "HERALD_FCM_TOKEN_URI", fileKey: "fcm.tokenUri") {
            config, value throws(ConfigurationError) in config.fcm.tokenURI = try url(value)
        },
        Key(flag: "fcm-ca-file", environment: "HERALD_FCM_CA_FILE", fileKey: "fcm.caFile") {
            config, value throws(ConfigurationError) in config.fcm.caFile = try text(value)
        },
        Key(flag: "log-level", environment: "HERALD_LOG_LEVEL", fileKey: "log.level") {
            config, value throws(ConfigurationError) in
            guard let level = Logger.Level(rawValue: value.lowercased()) else {
                throw ConfigurationError("must be one of trace, debug, info, notice, warning, error, critical")
            }
            config.logLevel = level
        },
        Key(flag: "log-format", environment: "HERALD_LOG_FORMAT", fileKey: "log.format") {
            config, value throws(ConfigurationError) in
            guard let format = ServerConfiguration.LogFormat(rawValue: value) else {
                throw ConfigurationError("must be text or json")
            }
            config.logFormat = format
        },
    ]

    /// PROTOCOL §4.3: incomplete provider settings stop the server at start, naming what is missing.
    static func checkPushSettings(_ configuration: ServerConfiguration) throws(ConfigurationError) {
        let apns = configuration.apns
        let apnsMissing = [
            ("--apns-key-id", apns.keyID), ("--apns-team-id", apns.teamID), ("--apns-topic", apns.topic),
        ].filter { $0.1 == nil }.map(\.0)
        if apns.keyFile != nil, !apnsMissing.isEmpty {
            throw ConfigurationError("APNs settings are incomplete: missing \(apnsMissing.joined(separator: ", "))")
        }
        if apns.keyFile == nil, apnsMissing.count < 3 {
            throw ConfigurationError("APNs settings are incomplete: missing --apns-key-file")
        }
        let fcm = configuration.fcm
        if fcm.serviceAccountFile == nil, fcm.projectID != nil || fcm.tokenURI != nil {
            throw ConfigurationError("FCM settings are incomplete: missing --fcm-service-account")
        }
    }

    private static func text(_ value: String) throws(ConfigurationError) -> String {
        let trimmed = value.trimmed
        guard !trimmed.isEmpty else { throw ConfigurationError("must not be empty") }
        return trimmed
    }

    private static func url(_ value: String) throws(ConfigurationError) -> String {
        let trimmed = value.trimmed
        guard trimmed.hasPrefix("https://") || trimmed.hasPrefix("http://"), trimmed.count > 8 else {
            throw ConfigurationError("must be an http(s) URL")
        }
        return trimmed
    }

    private static func integer(_ value: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let number = Int(value), range.contains(number) else {
            throw ConfigurationError("must be an integer in \(range.lowerBound)…\(range.upperBound)")
        }
        return number
    }
}
