import Foundation
import HeraldCore
import HeraldServer
import Logging
import Testing

@Suite struct ConfigurationTests {
    /// Writes `text` to a config file named `name` in a fresh folder and returns its path.
    static func configFile(_ text: String, name: String = "herald.yaml") throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-config-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The error `load` throws, or "" when it loads.
    static func failure(
        _ arguments: [String] = [], environment: [String: String] = [:], file: String? = nil
    ) async -> String {
        do {
            _ = try await ConfigurationLoader.load(arguments: arguments, environment: environment, configFile: file)
            return ""
        } catch { return error.description }
    }

    @Test func defaultsMatchTheCLIDocument() async throws {
        let configuration = try await ConfigurationLoader.load()
        #expect(configuration.http.host == "127.0.0.1")
        #expect(configuration.http.port == 8080)
        #expect(configuration.database.path == "./herald-data/herald.sqlite")
        #expect(configuration.effectiveAudience == "http://127.0.0.1:8080")
        #expect(configuration.operations.chainId == UInt256(1))
        #expect(configuration.operations.maxValiditySeconds == 600 && configuration.operations.clockSkewSeconds == 60)
        #expect(configuration.http.rateLimit == 50 && configuration.http.rateBurst == 200)
        #expect(configuration.http.bodyLimit == 65_536 && configuration.bindings.maxPerWallet == 20)
        #expect(configuration.bindings.expiryDays == 270)
        #expect(configuration.http.rateLimitIpv6Prefix == 64)
        #expect(configuration.retention.feedDays == 365 && configuration.retention.feedItemsPerWallet == 10_000)
        #expect(configuration.database.poolSize == 16 && configuration.database.connectTimeoutSeconds == 10)
        #expect(configuration.push.leaseSeconds == 60)
        #expect(configuration.log.level == .info && configuration.log.format == .text)
        #expect(configuration == HeraldSettings())
    }

    @Test func flagBeatsEnvironmentBeatsFileBeatsDefault() async throws {
        let file = try Self.configFile(
            """
            # Herald
            port: 9000
            host: "0.0.0.0"
            maxBindingsPerWallet: 7
            rateLimit: 12.5
            trustedProxies: ["10.0.0.0/8", "::1"]
            log:
              level: debug
              format: json  # for the shipper
            push.setupConfirmation: false
            """)
        let configuration = try await ConfigurationLoader.load(
            arguments: ["--port", "7000", "--max-validity=90"],
            environment: ["HERALD_PORT": "8000", "HERALD_HOST": "::1", "HERALD_CHAIN_ID": "137", "UNRELATED": "x"],
            configFile: file)
        #expect(configuration.http.port == 7000)
        #expect(configuration.operations.maxValiditySeconds == 90)
        #expect(configuration.http.host == "::1")
        #expect(configuration.effectiveAudience == "http://[::1]:7000")
        #expect(configuration.operations.chainId == UInt256(137))
        #expect(configuration.bindings.maxPerWallet == 7)
        #expect(configuration.http.rateLimit == 12.5)
        #expect(configuration.http.trustedProxies.map(\.description) == ["10.0.0.0/8", "::1/128"])
        #expect(configuration.log.level == .debug && configuration.log.format == .json)
        #expect(configuration.push.setupConfirmation == false)
    }

    @Test func jsonFilesUseTheSameKeys() async throws {
        let file = try Self.configFile(
            #"{"port": 9100, "audience": "https://push.example.org", "log": {"level": "warning"}, "trustedProxies": ["127.0.0.1"]}"#,
            name: "herald.json")
        let configuration = try await ConfigurationLoader.load(configFile: file)
        #expect(configuration.http.port == 9100)
        #expect(configuration.effectiveAudience == "https://push.example.org")
        #expect(configuration.log.level == .warning)
        #expect(configuration.http.trustedProxies.map(\.description) == ["127.0.0.1/32"])
    }

    @Test func listsComeCommaSeparatedFromFlagsAndTheEnvironmentAndFlagsMayRepeat() async throws {
        let fromEnvironment = try await ConfigurationLoader.load(
            environment: ["HERALD_TRUSTED_PROXY": "10.0.0.0/8, 192.168.0.1"])
        #expect(fromEnvironment.http.trustedProxies.map(\.description) == ["10.0.0.0/8", "192.168.0.1/32"])
        let fromFlags = try await ConfigurationLoader.load(
            arguments: ["--trusted-proxy", "10.0.0.0/8", "--trusted-proxy=::1"])
        #expect(fromFlags.http.trustedProxies.map(\.description) == ["10.0.0.0/8", "::1/128"])
    }

    @Test(arguments: [
        (["--port", "70000"], "--port: must be an integer in 0…65535"),
        (["--port", "eighty"], "--port: must be an integer in 0…65535"),
        (["--chain-id", "0"], "--chain-id: must be a positive decimal integer"),
        (["--rate-limit", "-1"], "--rate-limit: must be a number"),
        (["--trusted-proxy", "10.0.0.0/33"], "--trusted-proxy: \"10.0.0.0/33\" is not an address or CIDR"),
        (["--log-format", "xml"], "--log-format: must be text or json"),
        (["--database-pool-size", "0"], "--database-pool-size: must be an integer in 1…1000"),
        (["--database-connect-timeout", "x"], "--database-connect-timeout: must be an integer in 1…600"),
        (["--max-bindings", "0"], "--max-bindings: must be an integer in 1…10000"),
        (["--setup-confirmation", "maybe"], "--setup-confirmation: must be true or false"),
        (["--rate-limit-ipv6-prefix", "40"], "--rate-limit-ipv6-prefix: must be an integer in 48…128"),
        (["--retention-feed-days", "-1"], "--retention-feed-days: must be an integer in 0…36500"),
        (["--retention-feed-items", "x"], "--retention-feed-items: must be an integer in 0…100000000"),
    ])
    func badFlagsNameTheirSource(_ arguments: [String], _ message: String) async {
        #expect(await Self.failure(arguments).hasPrefix(message))
    }

    @Test func badEnvironmentAndFileValuesNameTheirSource() async throws {
        #expect(await Self.failure(environment: ["HERALD_PORT": "x"]) == "HERALD_PORT: must be an integer in 0…65535")
        #expect(
            await Self.failure(environment: ["HERALD_LOG_LEVEL": "loud"]).hasPrefix("HERALD_LOG_LEVEL: must be one"))
        let file = try Self.configFile("push:\n  attempts: 500\n")
        #expect(await Self.failure(file: file) == "push.attempts in herald.yaml: must be an integer in 1…100")
        let words = try Self.configFile("port: many\n")
        #expect(await Self.failure(file: words) == "port in herald.yaml: must be an integer in 0…65535")
        let retention = try Self.configFile(
            "rateLimitIpv6Prefix: 56\nretention:\n  feedDays: 0\n  feedItemsPerWallet: 50\n")
        let loaded = try await ConfigurationLoader.load(configFile: retention)
        #expect(loaded.http.rateLimitIpv6Prefix == 56)
        #expect(loaded.retention.feedDays == 0 && loaded.retention.feedItemsPerWallet == 50)
        #expect(
            try await ConfigurationLoader.load(environment: ["HERALD_RATE_LIMIT_IPV6_PREFIX": "128"])
                .http.rateLimitIpv6Prefix == 128)
        // A good flag hides a bad environment value: the source that wins is the one checked.
        #expect(await Self.failure(["--port", "1"], environment: ["HERALD_PORT": "x"]) == "")
    }

    @Test func unknownKeysBrokenFilesAndTomlAreRefused() async throws {
        #expect(await Self.failure(file: try Self.configFile("prot: 1\n")) == "unknown key \"prot\" in herald.yaml")
        #expect(
            await Self.failure(file: try Self.configFile("log:\n  levle: debug\n"))
                == "unknown key \"log.levle\" in herald.yaml")
        #expect(await Self.failure(file: try Self.configFile("port: [1\n")).hasPrefix("herald.yaml: not valid YAML"))
        #expect(await Self.failure(file: try Self.configFile("- port\n")).contains("top level must be a mapping"))
        #expect(await Self.failure(file: try Self.configFile("port:\n")) == "port in herald.yaml: has no value")
        #expect(
            await Self.failure(file: try Self.configFile("port: 1\nlog:\n  level: info\nlog.level: debug\n"))
                == "log.level in herald.yaml: given twice")
        let toml = try Self.configFile("port = 8080\n", name: "herald.toml")
        #expect(await Self.failure(file: toml).contains("TOML configuration files are no longer read"))
        #expect(
            await Self.failure(file: "/nonexistent/herald.yaml") == "cannot read config file /nonexistent/herald.yaml")
    }

    @Test func unknownFlagsAndMissingValuesAreErrors() async {
        #expect(await Self.failure(["--prot", "1"]) == "unknown option --prot (see herald serve --help)")
        #expect(await Self.failure(["--port"]) == "--port needs a value")
        #expect(await Self.failure(["--port", "1", "--port", "2"]) == "--port given twice")
        #expect(await Self.failure(["8080"]).hasPrefix("unexpected argument \"8080\""))
    }

    @Test func cidrMatching() throws {
        let network = try #require(CIDR("192.168.1.0/24"))
        #expect(network.contains([192, 168, 1, 77]))
        #expect(!network.contains([192, 168, 2, 1]))
        let loopback6 = try #require(CIDR("::1"))
        #expect(loopback6.contains([UInt8](repeating: 0, count: 15) + [1]))
        #expect(CIDR("not-an-ip") == nil)
    }

    @Test func pushSettingsLoadAndIncompleteProvidersAreNamed() async throws {
        let file = try Self.configFile(
            """
            apns:
              keyFile: /etc/herald/AuthKey.p8
              keyId: ABC123
              teamId: TEAM
              topic: org.x
              host: https://127.0.0.1:9443
            fcm:
              serviceAccountFile: /etc/herald/sa.json
            push:
              content: none
              setupConfirmation: false
            """)
        let loaded = try await ConfigurationLoader.load(configFile: file)
        #expect(loaded.apns.keyFile == "/etc/herald/AuthKey.p8" && loaded.apns.topic == "org.x")
        #expect(loaded.apns.host == "https://127.0.0.1:9443")
        #expect(loaded.apns.sandboxHost == "https://api.development.push.apple.com")
        #expect(
            loaded.fcm.serviceAccountFile == "/etc/herald/sa.json"
                && loaded.fcm.endpoint == "https://fcm.googleapis.com")
        #expect(loaded.push.content == .none && loaded.push.setupConfirmation == false)

        #expect(
            await Self.failure(["--apns-key-file", "k.p8"])
                == "APNs settings are incomplete: missing --apns-key-id, --apns-team-id, --apns-topic")
        #expect(
            await Self.failure(["--apns-key-file", "k.p8", "--apns-key-id", "A", "--apns-team-id", "T"]).hasSuffix(
                "missing --apns-topic"))
        #expect(
            await Self.failure(["--apns-topic", "org.x"]) == "APNs settings are incomplete: missing --apns-key-file")
        #expect(
            await Self.failure(["--fcm-project-id", "p"])
                == "FCM settings are incomplete: missing --fcm-service-account")
        #expect(await Self.failure(["--push-content", "some"]).contains("must be full or none"))
        #expect(await Self.failure(["--apns-host", "ftp://x"]).contains("must be an http(s) URL"))
    }

    @Test func upstreamSettingsAreAllOrNothing() async throws {
        let id = "0b7c2a9e-3a57-4a7e-9f0e-1c7f3c4e2a10"
        #expect(
            await Self.failure(["--upstream", "https://up.example"])
                == "upstream settings are incomplete: missing --upstream-installation-id, --upstream-installation-key-file"
        )
        #expect(
            await Self.failure(["--upstream-installation-id", id, "--upstream-installation-key-file", "k"])
                == "upstream settings are incomplete: missing --upstream")
        #expect(
            await Self.failure(["--upstream-ca-file", "ca.pem"])
                == "upstream settings are incomplete: missing --upstream, --upstream-installation-id, "
                + "--upstream-installation-key-file")
        #expect(
            await Self.failure([
                "--upstream", "https://up.example", "--upstream-installation-id", "nope",
                "--upstream-installation-key-file", "k",
            ]).contains("is not an installation id"))
        #expect(await Self.failure(["--upstream", "up.example"]).contains("must be an http(s) URL"))
        let environment = [
            "HERALD_UPSTREAM_URL": "http://127.0.0.1:9000", "HERALD_UPSTREAM_INSTALLATION_ID": id,
            "HERALD_UPSTREAM_INSTALLATION_KEY_FILE": "/k",
        ]
        let configuration = try await ConfigurationLoader.load(arguments: [], environment: environment)
        #expect(configuration.upstream.url == "http://127.0.0.1:9000")
        #expect(configuration.upstream.installationID == id)
        #expect(configuration.upstream.installationKeyFile == "/k")
    }
}
