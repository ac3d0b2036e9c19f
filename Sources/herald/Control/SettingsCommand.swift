import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore

/// `herald settings CHANNEL [--set ID=VALUE …]` (docs/protocol.md §10): this wallet's choices among a
/// channel's settings.
struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Show, or change, your wallet's choices among a channel's settings.",
        discussion: """
            Without --set, prints the effective value of each setting (your choice, or the channel's \
            default). Each --set ID=VALUE (true/false for a toggle, an integer for a threshold) goes into one \
            signed SubscriberSettings; the answer's values are printed.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The channel's address.") var channel: String
    @Option(name: .long, help: "Herald server URL.") var server: String
    @Option(name: .customLong("set"), help: "A choice, ID=VALUE (repeatable).") var choices: [String] = []
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?

    func run() async throws {
        let address = try EthereumAddress.argument(channel, what: "a channel address")
        let members = try choices.map(Self.choice)
        let session = try await SigningSession.open(global: global, server: server, acceptAudience: audience)
        let settings: JSONValue
        if members.isEmpty {
            let rows = try await SubscriptionsCommand.list(session)
            guard let row = rows.first(where: { $0.channel == address }) else {
                throw CLIError(.refused, "\(session.key.address) does not subscribe to \(address)")
            }
            settings = row.settings
        } else {
            let (issuedAt, expiresAt) = session.window
            let operation = try SubscriberSettingsUpdate(
                channel: address, subscriber: session.key.address, settings: JSONValue.object(members).jsonText,
                audience: session.info.audience, nonce: UInt256.randomNonce(), issuedAt: issuedAt,
                expiresAt: expiresAt)
            let answer = try await session.client.post(
                "/v1/subscriber-settings", json: session.sign(operation, scheme: .eip712).jsonText)
            settings = answer["settings"] ?? .object([])
        }
        if global.json {
            print(settings.jsonText)
        } else if let members = settings.objectMembers, !members.isEmpty {
            for member in members { print("\(member.key) \(member.value.jsonText)") }
        } else {
            print("the channel has no settings")
        }
    }

    /// `ID=true|false|<integer>` as a JSON member; anything else is a usage error (exit 64).
    static func choice(_ text: String) throws -> (key: String, value: JSONValue) {
        guard let equals = text.firstIndex(of: "=") else {
            throw CLIError(.usage, "--set takes ID=VALUE, not \(text)")
        }
        let id = String(text[..<equals])
        let raw = String(text[text.index(after: equals)...])
        switch raw {
        case "true": return (id, .bool(true))
        case "false": return (id, .bool(false))
        default:
            guard let number = Int64(raw) else {
                throw CLIError(.usage, "--set \(id): the value is true, false or an integer, not \(raw)")
            }
            return (id, .number(String(number)))
        }
    }
}
