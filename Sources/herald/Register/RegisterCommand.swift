import ArgumentParser
import Foundation
import HeraldCLISupport
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
        guard let platform = Platform(rawValue: platform), platform != .webpush else {
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

    func send() async throws {
        let (platform, scheme) = try device.validated()
        let session = try await SigningSession.open(
            global: global, server: device.server, acceptAudience: device.audience)
        let (issuedAt, expiresAt) = session.window
        let binding = DeviceBinding(
            action: action, wallet: session.key.address, platform: platform, deviceToken: device.deviceToken,
            audience: session.info.audience, nonce: UInt256.randomNonce(), issuedAt: issuedAt,
            expiresAt: expiresAt)
        let answer = try await session.client.post("/v1/devices", json: session.sign(binding, scheme: scheme).jsonText)
        if global.json {
            print(answer.jsonText)
        } else {
            let status = answer["status"]?.stringValue ?? "?"
            let token = DeviceToken.logPrefix(answer["deviceToken"]?.stringValue ?? device.deviceToken)
            let wallet = answer["wallet"]?.stringValue ?? session.key.address.checksummed
            print("\(status): \(wallet) \(platform.rawValue) \(token) on \(session.client.server.absoluteString)")
        }
    }
}
