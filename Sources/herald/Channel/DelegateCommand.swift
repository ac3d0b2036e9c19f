import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore

/// `herald channel delegate add|remove|list` (docs/protocol.md §11.1): keys a channel lets sign its
/// notifications, so that the channel's own key need not sit on every bot.
struct DelegateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delegate", abstract: "Let another wallet send as a channel, stop it, or list them.",
        subcommands: [DelegateAdd.self, DelegateRemove.self, DelegateList.self])
}

/// What `add` and `remove` share: sign a Delegate with the channel's keystore wallet and print `status`.
struct DelegateChangeOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The delegate's address.") var address: String
    @Option(name: .customLong("channel-wallet"), help: "The channel's keystore wallet (name or address).")
    var channelWallet: String?
    @Option(name: .long, help: "Herald server URL.") var server: String
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?

    func send(_ action: DelegateUpdate.Action) async throws {
        let delegate = try EthereumAddress.argument(address, what: "a delegate address")
        let session = try await SigningSession.open(
            global: global, server: server, acceptAudience: audience, wallet: channelWallet)
        let (issuedAt, expiresAt) = session.window
        let operation: DelegateUpdate
        do {
            operation = try DelegateUpdate(
                action: action, channel: session.key.address, delegate: delegate, audience: session.info.audience,
                nonce: UInt256.randomNonce(), issuedAt: issuedAt, expiresAt: expiresAt)
        } catch { throw CLIError(.usage, error.message) }
        let answer = try await session.client.post(
            "/v1/delegates", json: session.sign(operation, scheme: .eip712).jsonText)
        if global.json {
            print(answer.jsonText)
        } else {
            print("\(answer["status"]?.stringValue ?? "?") \(delegate.checksummed) for \(session.key.address)")
        }
    }
}

struct DelegateAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Let ADDRESS sign the channel's notifications (at most 20 delegates).")
    @OptionGroup var options: DelegateChangeOptions
    func run() async throws { try await options.send(.add) }
}

struct DelegateRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Stop ADDRESS from signing the channel's notifications, on every node at once."
    )
    @OptionGroup var options: DelegateChangeOptions
    func run() async throws { try await options.send(.remove) }
}

struct DelegateList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "A channel's delegates, from GET /v1/channels/{channel}.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The channel's address.") var channel: String
    @Option(name: .long, help: "Herald server URL.") var server: String

    func run() async throws {
        let answer = try await ChannelSettingsShow.channel(channel, server: server)
        let delegates = answer["delegates"] ?? .array([])
        if global.json {
            print(delegates.jsonText)
        } else if case .array(let entries) = delegates, !entries.isEmpty {
            for entry in entries { print(entry.stringValue ?? "?") }
        } else {
            print("no delegates")
        }
    }
}
