import HeraldCore
import HeraldServer
import Logging
import Testing

@Suite struct ConfigurationTests {
    @Test func defaultsMatchTheCLIDocument() throws {
        let configuration = try ConfigurationLoader.load(flags: [:], environment: [:], file: [:])
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.databasePath == "./herald-data/herald.sqlite")
        #expect(configuration.effectiveAudience == "http://127.0.0.1:8080")
        #expect(configuration.chainId == UInt256(1))
        #expect(configuration.maxValiditySeconds == 600 && configuration.clockSkewSeconds == 60)
        #expect(configuration.rateLimit == 50 && configuration.rateBurst == 200)
        #expect(configuration.bodyLimit == 65_536 && configuration.maxBindingsPerWallet == 20)
        #expect(configuration.bindingExpiryDays == 270)
        #expect(configuration.logLevel == .info && configuration.logFormat == .text)
    }

    @Test func flagBeatsEnvironmentBeatsFileBeatsDefault() throws {
        let file = try ConfigurationLoader.parseFile(
            """
            # Herald
            port = 9000
            host = "0.0.0.0"
            maxBindingsPerWallet = 7
            trustedProxies = ["10.0.0.0/8", "::1"]

            [log]
            level = 'debug'
            format = "json"  # for the shipper
            """)
        let configuration = try ConfigurationLoader.load(
            flags: ["port": "7000"],
            environment: ["HERALD_PORT": "8000", "HERALD_HOST": "::1", "HERALD_CHAIN_ID": "137"],
            file: file)
        #expect(configuration.port == 7000)
        #expect(configuration.host == "::1")
        #expect(configuration.effectiveAudience == "http://[::1]:7000")
        #expect(configuration.chainId == UInt256(137))
        #expect(configuration.maxBindingsPerWallet == 7)
        #expect(configuration.trustedProxies.map(\.description) == ["10.0.0.0/8", "::1/128"])
        #expect(configuration.logLevel == .debug && configuration.logFormat == .json)
    }

    @Test func jsonFilesUseTheSameKeys() throws {
        let file = try ConfigurationLoader.parseFile(
            #"{"port": 9100, "audience": "https://push.example.org", "log": {"level": "warning"}, "trustedProxies": ["127.0.0.1"]}"#
        )
        let configuration = try ConfigurationLoader.load(flags: [:], environment: [:], file: file)
        #expect(configuration.port == 9100)
        #expect(configuration.effectiveAudience == "https://push.example.org")
        #expect(configuration.logLevel == .warning)
    }

    @Test(arguments: [
        (["port": "70000"], "--port"), (["chain-id": "0"], "--chain-id"), (["rate-limit": "-1"], "--rate-limit"),
        (["trusted-proxy": "10.0.0.0/33"], "--trusted-proxy"), (["log-format": "xml"], "--log-format"),
        (["database": "postgres://db/herald"], "--database"), (["max-bindings": "0"], "--max-bindings"),
    ])
    func badValuesNameTheirSource(_ flags: [String: String], _ source: String) {
        #expect {
            try ConfigurationLoader.load(flags: flags, environment: [:], file: [:])
        } throws: { error in
            (error as? ConfigurationError)?.description.hasPrefix(source) == true
        }
    }

    @Test func unknownFileKeysAndBrokenFilesAreErrors() {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(flags: [:], environment: [:], file: ["prot": "1"])
        }
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.parseFile("port 8080") }
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.parseFile("host = \"unterminated") }
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.parseFile("port = 1\nport = 2") }
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.parseFile("{\"port\": null}") }
    }

    @Test func cidrMatching() throws {
        let network = try #require(CIDR("192.168.1.0/24"))
        #expect(network.contains([192, 168, 1, 77]))
        #expect(!network.contains([192, 168, 2, 1]))
        let loopback6 = try #require(CIDR("::1"))
        #expect(loopback6.contains([UInt8](repeating: 0, count: 15) + [1]))
        #expect(CIDR("not-an-ip") == nil)
    }

    @Test func pushSettingsLoadAndIncompleteProvidersAreNamed() throws {
        let file = [
            "apns.keyFile": "/etc/herald/AuthKey.p8", "apns.keyId": "ABC123", "apns.teamId": "TEAM",
            "apns.topic": "org.x",
            "apns.host": "https://127.0.0.1:9443", "fcm.serviceAccountFile": "/etc/herald/sa.json",
            "push.content": "none", "push.setupConfirmation": "false",
        ]
        let loaded = try ConfigurationLoader.load(flags: [:], environment: [:], file: file)
        #expect(loaded.apns.keyFile == "/etc/herald/AuthKey.p8" && loaded.apns.topic == "org.x")
        #expect(loaded.apns.host == "https://127.0.0.1:9443")
        #expect(loaded.apns.sandboxHost == "https://api.development.push.apple.com")
        #expect(
            loaded.fcm.serviceAccountFile == "/etc/herald/sa.json"
                && loaded.fcm.endpoint == "https://fcm.googleapis.com")
        #expect(loaded.pushContent == .none && loaded.setupConfirmation == false)

        func failure(_ flags: [String: String]) -> String {
            do {
                _ = try ConfigurationLoader.load(flags: flags, environment: [:], file: [:])
                return ""
            } catch { return error.description }
        }
        #expect(
            failure(["apns-key-file": "k.p8"])
                == "APNs settings are incomplete: missing --apns-key-id, --apns-team-id, --apns-topic")
        #expect(
            failure(["apns-key-file": "k.p8", "apns-key-id": "A", "apns-team-id": "T"]).hasSuffix(
                "missing --apns-topic"))
        #expect(failure(["apns-topic": "org.x"]) == "APNs settings are incomplete: missing --apns-key-file")
        #expect(failure(["fcm-project-id": "p"]) == "FCM settings are incomplete: missing --fcm-service-account")
        #expect(failure(["push-content": "some"]).contains("must be full or none"))
        #expect(failure(["apns-host": "ftp://x"]).contains("must be an http(s) URL"))
    }
}
