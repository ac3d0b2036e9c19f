import Crypto
import Foundation
import HeraldTesting

/// A running fake APNs and the credential files a `herald serve` needs to reach it: the `.p8` key,
/// and the fake's certificate as the CA to trust.
final class APNsFixture: Sendable {
    let folder: String
    let fake: FakeAPNs

    init(folder: String) async throws {
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let key = P256.Signing.PrivateKey()
        fake = try FakeAPNs(publicKey: key.publicKey, keyID: "KEY123", teamID: "TEAM45", topic: "org.example.herald")
        try await fake.start()
        try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: folder + "/AuthKey.p8"))
        try fake.certificate.writeCertificate(to: folder + "/apns-ca.pem")
    }

    /// `herald serve` options that send both APNs hosts' pushes to the fake.
    var serverArguments: [String] {
        [
            "--apns-key-file", folder + "/AuthKey.p8", "--apns-key-id", "KEY123", "--apns-team-id", "TEAM45",
            "--apns-topic", "org.example.herald", "--apns-host", fake.url, "--apns-sandbox-host", fake.url,
            "--apns-ca-file", folder + "/apns-ca.pem",
        ]
    }

    /// The sids of the items the fake has received pushes for.
    var deliveredSids: [String] { fake.received.compactMap { $0.json?["sid"]?.stringValue } }
}
