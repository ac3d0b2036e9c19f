import ArgumentParser
import Foundation
import HeraldCore

/// The options register and unregister share.
struct DeviceOptions: ParsableArguments {
    @Option(name: .long, help: "Herald server URL, e.g. http://127.0.0.1:8080.")
    var server: String

    @Option(name: .long, help: "ios (APNs production), ios-sandbox (APNs development) or android (FCM).")
    var platform: String

    @Option(name: .customLong("device-token"), help: "The push token the app received from APNs or FCM.")
    var deviceToken: String

    @Option(name: .long, help: "Signature scheme: eip712 (typed data) or eip191 (personal_sign of the text form).")
    var scheme: String = "eip712"

    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned on first use.")
    var audience: String?

    func validated() throws -> (Platform, SignatureScheme) {
        guard let platform = Platform(rawValue: platform) else {
            throw CLIError(.usage, "--platform must be ios, ios-sandbox or android")
        }
        guard let scheme = SignatureScheme(rawValue: scheme) else {
            throw CLIError(.usage, "--scheme must be eip712 or eip191")
        }
        guard DeviceToken.isValid(deviceToken, for: platform) else {
            let rule = platform.isApple ? "64-200 hex digits, even length" : "32-4096 characters of [A-Za-z0-9_:-]"
            throw CLIError(.badInput, "--device-token is not a valid \(platform.rawValue) token (\(rule))")
        }
        return (platform, scheme)
    }
}

struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Bind a device token to your wallet on a Herald server (signed by the wallet).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var device: DeviceOptions

    func run() async throws {
        try await DeviceBindingRequest(global: global, device: device, action: .register).send()
    }
}

struct UnregisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unregister", abstract: "Remove a device token's binding to your wallet (signed by the wallet).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var device: DeviceOptions

    func run() async throws {
        try await DeviceBindingRequest(global: global, device: device, action: .unregister).send()
    }
}

/// Reads the server's identity, signs a DeviceBinding with the keystore wallet and posts it.
struct DeviceBindingRequest {
    let global: GlobalOptions
    let device: DeviceOptions
    let action: DeviceBinding.Action

    /// How long a signed operation stays valid: short, so a leaked one is soon useless.
    static let lifetime: Int64 = 300

    func send() async throws {
        let (platform, scheme) = try device.validated()
        let wallet = try global.selectWallet()
        let client = try HeraldHTTPClient(server: device.server)
        let info = try await client.info()
        try ServerTrust(home: global.homePath).check(server: client.server, info: info, acceptAudience: device.audience)
        let passphrase = try PassphraseSource(options: global).unlock(prompt: "Passphrase for \(wallet.name): ")
        let key = try wallet.keystore.decrypt(passphrase: passphrase)
        let now = Int64(Date().timeIntervalSince1970)
        let binding = DeviceBinding(
            action: action, wallet: key.address, platform: platform, deviceToken: device.deviceToken,
            audience: info.audience, nonce: Self.randomNonce(), issuedAt: UInt256(UInt64(now)),
            expiresAt: UInt256(UInt64(now + min(Self.lifetime, info.maxValiditySeconds))))
        let envelope: SignedEnvelope<DeviceBinding>
        do {
            envelope = try binding.signed(with: key, scheme: scheme, domain: HeraldDomain(chainId: info.chainId))
        } catch let rejection as OperationRejection {
            throw CLIError(.badInput, rejection.message)
        }
        let answer = try await client.post("/v1/devices", json: envelope.jsonText)
        if global.json {
            print(answer.jsonText)
        } else {
            let status = answer["status"]?.stringValue ?? "?"
            let token = DeviceToken.logPrefix(answer["deviceToken"]?.stringValue ?? device.deviceToken)
            print(
                "\(status): \(answer["wallet"]?.stringValue ?? key.address.checksummed) \(platform.rawValue) \(token) on \(client.server.absoluteString)"
            )
        }
    }

    /// 128 random bits: collisions across a wallet's operations are out of the question.
    static func randomNonce() -> UInt256 {
        (try? UInt256(bigEndian: SecureRandom.bytes(16))) ?? UInt256(UInt64.random(in: 1...UInt64.max))
    }
}
