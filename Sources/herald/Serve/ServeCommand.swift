import ArgumentParser
import Foundation
import HeraldRelay
import HeraldServer
import HeraldStore
import Logging
import NIOCore
import NIOPosix

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the verifier server (embedded SQLite by default).",
        discussion: """
            Precedence: flag, then HERALD_* environment variable, then --config FILE (TOML or JSON), then the \
            default. With no configuration at all it listens on 127.0.0.1:8080 with ./herald-data/herald.sqlite.
            """
    )

    @Option(
        name: .long, help: ArgumentHelp("Config file, TOML or JSON (keys as in the README table).", valueName: "FILE"))
    var config: String?

    @Option(name: .long, help: "Listen address (HERALD_HOST; default 127.0.0.1).") var host: String?
    @Option(name: .long, help: "Listen port, 0 for any free one (HERALD_PORT; default 8080).") var port: String?
    @Option(name: .long, help: "SQLite database file (HERALD_DATABASE; default ./herald-data/herald.sqlite).")
    var database: String?
    @Option(name: .long, help: "Audience operations must name (HERALD_AUDIENCE; default http://<host>:<port>).")
    var audience: String?
    @Option(name: .customLong("chain-id"), help: "EIP-712 chain id (HERALD_CHAIN_ID; default 1).") var chainId: String?
    @Option(
        name: .customLong("max-validity"),
        help: "Longest expiresAt - issuedAt in seconds (HERALD_MAX_VALIDITY; default 600).")
    var maxValidity: String?
    @Option(
        name: .customLong("clock-skew"), help: "Tolerated client clock skew in seconds (HERALD_CLOCK_SKEW; default 60)."
    )
    var clockSkew: String?
    @Option(
        name: .customLong("rate-limit"), help: "POST requests/s per client IP, 0 = off (HERALD_RATE_LIMIT; default 50)."
    )
    var rateLimit: String?
    @Option(name: .customLong("rate-burst"), help: "Token bucket size (HERALD_RATE_BURST; default 200).") var rateBurst:
        String?
    @Option(
        name: .customLong("trusted-proxy"),
        help: "CIDRs whose X-Forwarded-For is believed, comma-separated (HERALD_TRUSTED_PROXY).")
    var trustedProxy: String?
    @Option(name: .customLong("body-limit"), help: "Request body limit in bytes (HERALD_BODY_LIMIT; default 65536).")
    var bodyLimit: String?
    @Option(
        name: .customLong("request-timeout"),
        help: "Seconds a request may take to arrive whole (HERALD_REQUEST_TIMEOUT; default 30).")
    var requestTimeout: String?
    @Option(
        name: .customLong("max-connections"),
        help: "Connections open at once; more are closed (HERALD_MAX_CONNECTIONS; default 4096).")
    var maxConnections: String?
    @Option(name: .customLong("max-bindings"), help: "Bindings per wallet (HERALD_MAX_BINDINGS; default 20).")
    var maxBindings: String?
    @Option(
        name: .customLong("binding-expiry-days"),
        help: "Prune bindings not refreshed for this long (HERALD_BINDING_EXPIRY_DAYS; default 270).")
    var bindingExpiryDays: String?
    @Option(
        name: .customLong("push-attempts"), help: "Sends per push before it fails (HERALD_PUSH_ATTEMPTS; default 8).")
    var pushAttempts: String?
    @Option(
        name: .customLong("push-max-age"),
        help: "Seconds a push may wait before it fails unsent (HERALD_PUSH_MAX_AGE; default 86400).")
    var pushMaxAge: String?
    @Option(
        name: .customLong("push-concurrency"),
        help: "Pushes in flight per provider (HERALD_PUSH_CONCURRENCY; default 100).")
    var pushConcurrency: String?
    @Option(
        name: .customLong("push-content"),
        help: "full (messages in pushes) or none (wake-up pushes only) (HERALD_PUSH_CONTENT; default full).")
    var pushContent: String?
    @Option(
        name: .customLong("setup-confirmation"),
        help: "true or false: a push confirms each new binding (HERALD_SETUP_CONFIRMATION; default true).")
    var setupConfirmation: String?
    @Option(
        name: .customLong("apns-key-file"), help: "APNs .p8 token-signing key (HERALD_APNS_KEY_FILE; none: no APNs).")
    var apnsKeyFile: String?
    @Option(name: .customLong("apns-key-id"), help: "Its key id (HERALD_APNS_KEY_ID).")
    var apnsKeyID: String?
    @Option(name: .customLong("apns-team-id"), help: "The Apple team id (HERALD_APNS_TEAM_ID).")
    var apnsTeamID: String?
    @Option(name: .customLong("apns-topic"), help: "The app's bundle id, apns-topic (HERALD_APNS_TOPIC).")
    var apnsTopic: String?
    @Option(
        name: .customLong("apns-host"), help: "Production host (HERALD_APNS_HOST; default https://api.push.apple.com).")
    var apnsHost: String?
    @Option(
        name: .customLong("apns-sandbox-host"),
        help: "Sandbox host (HERALD_APNS_SANDBOX_HOST; default https://api.development.push.apple.com).")
    var apnsSandboxHost: String?
    @Option(
        name: .customLong("apns-ca-file"), help: "An extra trusted root in PEM, for local fakes (HERALD_APNS_CA_FILE).")
    var apnsCAFile: String?
    @Option(
        name: .customLong("fcm-service-account"),
        help: "FCM service-account JSON (HERALD_FCM_SERVICE_ACCOUNT; none: no FCM).")
    var fcmServiceAccount: String?
    @Option(
        name: .customLong("fcm-project-id"), help: "Project id (HERALD_FCM_PROJECT_ID; default: the service account's)."
    )
    var fcmProjectID: String?
    @Option(
        name: .customLong("fcm-endpoint"),
        help: "FCM base URL (HERALD_FCM_ENDPOINT; default https://fcm.googleapis.com).")
    var fcmEndpoint: String?
    @Option(
        name: .customLong("fcm-token-uri"),
        help: "OAuth token endpoint (HERALD_FCM_TOKEN_URI; default: the service account's token_uri).")
    var fcmTokenURI: String?
    @Option(
        name: .customLong("fcm-ca-file"), help: "An extra trusted root in PEM, for local fakes (HERALD_FCM_CA_FILE).")
    var fcmCAFile: String?
    @Option(name: .customLong("log-level"), help: "trace…critical (HERALD_LOG_LEVEL; default info).") var logLevel:
        String?
    @Option(name: .customLong("log-format"), help: "text or json (HERALD_LOG_FORMAT; default text).") var logFormat:
        String?

    var flags: [String: String] {
        let given: [(String, String?)] = [
            ("host", host), ("port", port), ("database", database), ("audience", audience), ("chain-id", chainId),
            ("max-validity", maxValidity), ("clock-skew", clockSkew), ("rate-limit", rateLimit),
            ("rate-burst", rateBurst),
            ("trusted-proxy", trustedProxy), ("body-limit", bodyLimit), ("request-timeout", requestTimeout),
            ("max-connections", maxConnections), ("max-bindings", maxBindings),
            ("binding-expiry-days", bindingExpiryDays), ("push-attempts", pushAttempts), ("push-max-age", pushMaxAge),
            ("push-concurrency", pushConcurrency), ("push-content", pushContent),
            ("setup-confirmation", setupConfirmation), ("apns-key-file", apnsKeyFile), ("apns-key-id", apnsKeyID),
            ("apns-team-id", apnsTeamID), ("apns-topic", apnsTopic), ("apns-host", apnsHost),
            ("apns-sandbox-host", apnsSandboxHost), ("apns-ca-file", apnsCAFile),
            ("fcm-service-account", fcmServiceAccount), ("fcm-project-id", fcmProjectID), ("fcm-endpoint", fcmEndpoint),
            ("fcm-token-uri", fcmTokenURI), ("fcm-ca-file", fcmCAFile), ("log-level", logLevel),
            ("log-format", logFormat),
        ]
        return Dictionary(uniqueKeysWithValues: given.compactMap { name, value in value.map { (name, $0) } })
    }

    func run() async throws {
        var configuration = try loadConfiguration()
        // With --port 0 and no audience, the default audience must name the port actually used:
        // pick a free one now, so that the audience is known before the verifier is built.
        if configuration.port == 0 && configuration.audience == nil {
            configuration.port = try FreePort.find(host: configuration.host)
        }
        // Run Swift concurrency on NIO's event loops (one per core) instead of a second thread pool:
        // a request's handler then continues on the thread that read it, with no hand-off and back.
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let logger = Self.bootstrapLogging(configuration)
        let store: SQLiteHeraldStore
        do {
            store = try SQLiteHeraldStore(path: configuration.databasePath, logger: logger)
        } catch {
            throw CLIError(.unexpected, "\(error)")
        }
        let providers: PushProviders
        do {
            providers = try PushProviderFactory.make(configuration, logger: logger)
        } catch {
            throw CLIError(.usage, "\(error)")
        }
        let state = ServerState(
            configuration: configuration, store: store, logger: logger, version: HeraldVersion.current)
        let settled = configuration
        let host = settled.host.contains(":") ? "[\(settled.host)]" : settled.host
        let group = HeraldServerApp.makeServiceGroup(state, providers: providers) { port in
            // One line on stdout that scripts (and tests, with --port 0) can read.
            let line =
                "herald listening on http://\(host):\(port) audience=\(settled.effectiveAudience) "
                + "chainId=\(settled.chainId) database=\(settled.databasePath)\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
        do {
            try await group.run()
        } catch {
            throw CLIError(.unexpected, "server stopped: \(error)")
        }
    }

    func loadConfiguration() throws -> ServerConfiguration {
        var file: [String: String] = [:]
        if let config {
            guard let data = FileManager.default.contents(atPath: config) else {
                throw CLIError(.usage, "cannot read config file \(config)")
            }
            do {
                file = try ConfigurationLoader.parseFile(String(decoding: data, as: UTF8.self))
            } catch {
                throw CLIError(.usage, "\(config): \(error.description)")
            }
        }
        do {
            return try ConfigurationLoader.load(
                flags: flags, environment: ProcessInfo.processInfo.environment, file: file)
        } catch {
            throw CLIError(.usage, error.description)
        }
    }

    static func bootstrapLogging(_ configuration: ServerConfiguration) -> Logger {
        let level = configuration.logLevel
        switch configuration.logFormat {
        case .text:
            LoggingSystem.bootstrap { label in
                var handler = TextLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        case .json:
            LoggingSystem.bootstrap { label in
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        }
        return Logger(label: "herald")
    }
}
