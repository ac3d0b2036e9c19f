import Foundation
import HeraldCore
import HeraldTesting
import Testing

/// The fake APNs and FCM, running, with the credential files a `herald serve` needs to reach them:
/// what every end-to-end suite that delivers pushes starts from.
final class PushFakes: @unchecked Sendable {
    let folder: String
    let apnsFixture: APNsFixture
    var apns: FakeAPNs { apnsFixture.fake }
    let fcm: FakeFCM

    init(folder: String) async throws {
        self.folder = folder
        apnsFixture = try await APNsFixture(folder: folder)
        fcm = try FakeFCM()
        try await fcm.start()
        try Data(fcm.serviceAccountJSON).write(to: URL(fileURLWithPath: folder + "/service-account.json"))
    }

    /// `herald serve` arguments that send to both fakes.
    var serverArguments: [String] {
        apnsFixture.serverArguments + [
            "--fcm-service-account", folder + "/service-account.json", "--fcm-endpoint", fcm.url,
        ]
    }

    func stop() {
        apns.stop()
        fcm.stop()
    }
}

/// A channel sending through a server's `POST /v1/notifications`, as a dApp would.
enum ChannelSender {
    /// Signs `payload` as `key` for the tests' audience and posts it; returns the sids of the 202.
    static func send(_ payload: String, as key: PrivateKey, to server: String) async throws -> [String] {
        let now = UInt64(Date().timeIntervalSince1970)
        let operation = NotificationOperation(
            channel: key.address, payload: payload, audience: "herald-test",
            nonce: try UInt256(bigEndian: SecureRandom.bytes(16)), issuedAt: UInt256(now - 5),
            expiresAt: UInt256(now + 120))
        let body = try operation.signed(with: key, scheme: .eip712, domain: HeraldDomain(chainId: 1))
        let (status, answer) = try await HTTP.post(server + "/v1/notifications", json: body.jsonText)
        #expect(status == 202, "\(String(decoding: answer, as: UTF8.self))")
        guard case .array(let sids)? = try JSONParser.parse(Array(answer))["sid"] else { return [] }
        return sids.compactMap(\.stringValue)
    }
}

extension CLIRunner {
    /// The address of this home's wallet (`herald wallet address`).
    var walletAddress: EthereumAddress {
        get throws {
            try EthereumAddress(
                parsing: try run(["wallet", "address"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}
