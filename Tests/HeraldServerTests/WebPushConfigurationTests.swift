import Crypto
import Foundation
import HeraldCore
import HeraldServer
import Testing

/// The `--webpush-*` settings of CLI.md: a key needs a subject, the rest need a key (exit 64), the
/// key is read at load and its public half published.
@Suite struct WebPushConfigurationTests {
    static func keyFile(_ pem: String) throws -> String {
        try ConfigurationTests.configFile(pem, name: "vapid.pem")
    }

    @Test func incompleteOrMalformedSettingsAreRefusedNamingWhatIsMissing() async throws {
        let key = try Self.keyFile(P256.Signing.PrivateKey().pemRepresentation)
        #expect(
            await ConfigurationTests.failure(["--webpush-vapid-key-file", key])
                == "Web Push settings are incomplete: missing --webpush-subject")
        #expect(
            await ConfigurationTests.failure(["--webpush-subject", "mailto:ops@example.org"])
                == "Web Push settings are incomplete: missing --webpush-vapid-key-file")
        #expect(
            await ConfigurationTests.failure(["--webpush-allow-network", "10.0.0.0/8"])
                == "Web Push settings are incomplete: missing --webpush-vapid-key-file")
        for subject in ["ops@example.org", "http://example.org", "mailto:"] {
            let message = await ConfigurationTests.failure([
                "--webpush-vapid-key-file", key, "--webpush-subject", subject,
            ])
            #expect(message.contains("mailto: or https:"), "\(subject): \(message)")
        }
        let notAKey = try Self.keyFile("not a key")
        let unreadable = await ConfigurationTests.failure([
            "--webpush-vapid-key-file", notAKey, "--webpush-subject", "mailto:ops@example.org",
        ])
        #expect(unreadable.contains("is not a PEM P-256 private key"))
        let badNetwork = await ConfigurationTests.failure([
            "--webpush-vapid-key-file", key, "--webpush-subject", "mailto:ops@example.org",
            "--webpush-allow-network", "10.0.0.0/33",
        ])
        #expect(badNetwork.contains("is not an address or CIDR"))
    }

    @Test func flagsTheEnvironmentAndTheFileSetTheKeyAndItsPublicHalf() async throws {
        let signing = P256.Signing.PrivateKey()
        let key = try Self.keyFile(signing.pemRepresentation)
        let expected = Base64URL.encode(Array(signing.publicKey.x963Representation))
        let fromFlags = try await ConfigurationLoader.load(arguments: [
            "--webpush-vapid-key-file", key, "--webpush-subject", "https://ops.example.org",
            "--webpush-allow-network", "192.168.1.0/24", "--webpush-allow-network", "::1",
            "--webpush-ca-file", "/ca.pem",
        ])
        #expect(fromFlags.webpush.vapidPublicKey == expected)
        #expect(fromFlags.webpush.subject == "https://ops.example.org")
        #expect(
            fromFlags.webpush.allowNetworks == [IPNetwork("192.168.1.0/24"), IPNetwork("::1/128")].compactMap { $0 })
        #expect(fromFlags.webpush.caFile == "/ca.pem")
        let fromEnvironment = try await ConfigurationLoader.load(
            environment: [
                "HERALD_WEBPUSH_VAPID_KEY_FILE": key, "HERALD_WEBPUSH_SUBJECT": "mailto:a@example.org",
                "HERALD_WEBPUSH_ALLOW_NETWORKS": "10.0.0.0/8,127.0.0.0/8",
            ])
        #expect(fromEnvironment.webpush.allowNetworks.count == 2)
        let file = try ConfigurationTests.configFile(
            """
            webpush:
              vapidKeyFile: \(key)
              subject: mailto:file@example.org
              allowNetworks: [172.16.0.0/12]
            """)
        let fromFile = try await ConfigurationLoader.load(configFile: file)
        #expect(fromFile.webpush.subject == "mailto:file@example.org")
        #expect(fromFile.webpush.allowNetworks == [IPNetwork("172.16.0.0/12")].compactMap { $0 })
        #expect(fromFile.webpush.vapidPublicKey == expected)
        let none = try await ConfigurationLoader.load()
        #expect(none.webpush.vapidPublicKey == nil)
    }
}
