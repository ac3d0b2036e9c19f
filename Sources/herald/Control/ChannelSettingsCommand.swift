import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore

/// `herald channel settings set|show` (docs/protocol.md §10): what a channel's subscribers may choose.
struct ChannelSettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "Publish or show a channel's settings (what its subscribers may choose).",
        subcommands: [ChannelSettingsSet.self, ChannelSettingsShow.self])
}

struct ChannelSettingsSet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Sign a ChannelSettings with the channel's wallet: the file's list replaces the channel's.",
        discussion: """
            The file holds a JSON array of at most 16 settings, each \
            {"id","kind":"toggle","default":bool,"description"} or \
            {"id","kind":"threshold","min","max","default","description"}. It is checked here (exit 65 before \
            anything is sent) and sent compactly, keys in the protocol's order.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .customLong("channel-wallet"), help: "The channel's keystore wallet (name or address).")
    var channelWallet: String?
    @Option(name: .long, help: "Herald server URL.") var server: String
    @Option(name: .long, help: "The settings list (JSON).") var file: String
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?

    func run() async throws {
        let text: String
        do { text = try String(contentsOfFile: file, encoding: .utf8) } catch {
            throw CLIError(.badInput, "cannot read \(file): \(error.localizedDescription)")
        }
        let list: ChannelSettingsList
        do { list = try ChannelSettingsList.parse(text) } catch {
            throw CLIError(.badInput, "\(file): \(error.message)")
        }
        let session = try await SigningSession.open(
            global: global, server: server, acceptAudience: audience, wallet: channelWallet)
        let (issuedAt, expiresAt) = session.window
        let operation = try ChannelSettingsUpdate(
            channel: session.key.address, settings: list.jsonText, audience: session.info.audience,
            nonce: UInt256.randomNonce(), issuedAt: issuedAt, expiresAt: expiresAt)
        let answer = try await session.client.post(
            "/v1/channel-settings", json: session.sign(operation, scheme: .eip712).jsonText)
        if global.json {
            print(answer.jsonText)
        } else {
            print("published \(list.settings.count) setting(s) for \(session.key.address)")
            ChannelSettingsShow.printList(answer["settings"])
        }
    }
}

struct ChannelSettingsShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "A channel's settings, from GET /v1/channels/{channel}.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The channel's address.") var channel: String
    @Option(name: .long, help: "Herald server URL.") var server: String

    func run() async throws {
        let answer = try await Self.channel(channel, server: server)
        if global.json {
            print((answer["settings"] ?? .array([])).jsonText)
        } else {
            Self.printList(answer["settings"])
        }
    }

    /// `GET /v1/channels/{channel}` for a channel given on the command line (its settings, its delegates).
    static func channel(_ text: String, server: String) async throws -> JSONValue {
        let address = try EthereumAddress.argument(text, what: "a channel address")
        let client = try HeraldHTTPClient(server: server)
        return try await client.send(method: .GET, path: "/v1/channels/\(address.checksummed)", body: nil)
    }

    /// One line a setting: `id  toggle (default true)  description`.
    static func printList(_ settings: JSONValue?) {
        guard case .array(let entries)? = settings, !entries.isEmpty else {
            print("no settings")
            return
        }
        for entry in entries {
            let id = entry["id"]?.stringValue ?? "?"
            let kind = entry["kind"]?.stringValue ?? "?"
            let shape =
                kind == "threshold"
                ? "threshold \(entry["min"]?.jsonText ?? "?")…\(entry["max"]?.jsonText ?? "?")" : kind
            let description = entry["description"]?.stringValue ?? ""
            print(
                "\(id)  \(shape) (default \(entry["default"]?.jsonText ?? "?"))\(description.isEmpty ? "" : "  " + description)"
            )
        }
    }
}
