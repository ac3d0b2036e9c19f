import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldRelay
import HeraldServer
import HeraldStore
import Logging
import NIOCore
import NIOPosix

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the verifier server (embedded SQLite by default, or PostgreSQL for several nodes).",
        discussion: """
            Precedence: flag, then HERALD_* environment variable, then --config FILE (YAML or JSON), then the \
            default. With no configuration at all it listens on 127.0.0.1:8080 with ./herald-data/herald.sqlite.

            Settings (flag, environment variable, file key; meanings and defaults in docs/configuration.md):
            \(ConfigurationLoader.settingsHelp)
            """
    )

    @Option(
        name: .long,
        help: ArgumentHelp("Config file, YAML or JSON (keys as in docs/configuration.md).", valueName: "FILE"))
    var config: String?

    /// Every other setting, `--name value` or `--name=value`: read by swift-configuration's layering
    /// with the environment and the file, so each is spelled once, in SettingTable.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("Settings as --name value; see below and docs/configuration.md.", valueName: "setting"))
    var settings: [String] = []

    func run() async throws {
        // A file-size limit (RLIMIT_FSIZE, as a quota or `prlimit --fsize` sets) then fails the write with
        // EFBIG, which storage reports as unavailable (503), instead of killing the server with SIGXFSZ.
        signal(SIGXFSZ, SIG_IGN)
        var configuration = try await loadConfiguration()
        // With --port 0 and no audience, the default audience must name the port actually used:
        // pick a free one now, so that the audience is known before the verifier is built.
        if configuration.http.port == 0 && configuration.operations.audience == nil {
            configuration.http.port = try FreePort.find(host: configuration.http.host)
        }
        // Run Swift concurrency on NIO's event loops (one per core) instead of a second thread pool:
        // a request's handler then continues on the thread that read it, with no hand-off and back.
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let logger = Self.bootstrapLogging(configuration)
        // Serving: a SQLite file is locked for this process first (a second server on it would void this
        // one's outbox claims and send their pushes again), then claims of an earlier run are voided.
        let store = try await CommandStore.open(
            configuration.database.path, poolSize: configuration.database.poolSize,
            connectTimeoutSeconds: configuration.database.connectTimeoutSeconds, serving: true, logger: logger)
        let released = try await store.prepareToServe()
        if released > 0 { logger.info("push outbox: \(released) claims of an earlier run released") }
        let providers: PushProviders
        do {
            providers = try PushProviderFactory.make(configuration, logger: logger)
        } catch {
            throw CLIError(.usage, "\(error)")
        }
        if configuration.bisq.relay {
            // An open relay is worth a line in the log; one without credentials only fails its pushes.
            let missing = [("APNs", providers.apns), ("FCM", providers.fcm)].filter { $0.1 == nil }.map(\.0)
            let warning =
                missing.isEmpty ? "" : " (no \(missing.joined(separator: " or ")) credentials: those pushes fail)"
            logger.notice("Bisq relay on: GET /relay, POST /v1/apns|fcm/device/{token}\(warning)")
        }
        let webhookKey: PrivateKey
        do { webhookKey = try await ServerState.loadWebhookKey(from: store) } catch {
            throw CLIError(.unexpected, "cannot read or store the webhook key: \(error)")
        }
        let state = ServerState(
            configuration: configuration, store: store, logger: logger, version: HeraldVersion.current,
            webhookKey: webhookKey)
        let settled = configuration
        let host = settled.http.host.contains(":") ? "[\(settled.http.host)]" : settled.http.host
        let group = HeraldServerApp.makeServiceGroup(state, providers: providers) { port in
            // One line on stdout that scripts (and tests, with --port 0) can read.
            let line =
                "herald listening on http://\(host):\(port) audience=\(settled.effectiveAudience) "
                + "chainId=\(settled.operations.chainId) database=\(StoreFactory.describe(settled.database.path))\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
        do {
            try await group.run()
        } catch {
            throw CLIError(.unexpected, "server stopped: \(error)")
        }
    }

    func loadConfiguration() async throws -> HeraldSettings {
        do {
            return try await ConfigurationLoader.load(
                arguments: settings, environment: ProcessInfo.processInfo.environment, configFile: config)
        } catch {
            throw CLIError(.usage, error.description)
        }
    }

    static func bootstrapLogging(_ configuration: HeraldSettings) -> Logger {
        let level = configuration.log.level
        switch configuration.log.format {
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
