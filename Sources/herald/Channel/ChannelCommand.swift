import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldStore

/// Operators manage channels on the server's database directly, as `sqlite3` would; a running
/// server sees the change on its next request (it reads channels from the database every time).
struct ChannelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channel",
        abstract: "Add, list and remove channels (sender wallets) on a server's database; publish their settings.",
        subcommands: [
            ChannelAdd.self, ChannelList.self, ChannelRemove.self, ChannelInvite.self, ChannelSettingsCommand.self,
            DelegateCommand.self,
        ]
    )
}

/// Which database: `--database`, else `HERALD_DATABASE`, else the server's default.
struct DatabaseOption: ParsableArguments {
    @Option(
        name: .long,
        help:
            "The server's database: a SQLite file or a postgres:// URL (HERALD_DATABASE; default ./herald-data/herald.sqlite)."
    )
    var database: String?

    func open() async throws -> any HeraldStore {
        let database =
            database ?? ProcessInfo.processInfo.environment["HERALD_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "./herald-data/herald.sqlite"
        return try await CommandStore.open(database, poolSize: 2)
    }
}

/// One channel as printed with `--json`.
struct ChannelRow: Encodable {
    let channel: String
    let name: String
    let icon: String
    let url: String

    init(_ record: ChannelRecord) {
        channel = record.address.checksummed
        name = record.name
        icon = record.icon
        url = record.url
    }
}

struct ChannelAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a channel, or update its name, icon and URL.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var storage: DatabaseOption

    @Argument(help: "The channel's wallet address (any wallet form).") var address: String
    @Option(name: .long, help: "Display name (the `app` of every item it sends).") var name: String
    @Option(name: .long, help: "Icon URL.") var icon: String = ""
    @Option(name: .long, help: "Site URL.") var url: String = ""

    func run() async throws {
        let channel = try EthereumAddress.argument(address)
        guard !name.isEmpty, name.unicodeScalars.count <= 80 else {
            throw CLIError(.usage, "--name must be 1-80 characters")
        }
        guard icon.unicodeScalars.count <= 255, url.unicodeScalars.count <= 255 else {
            throw CLIError(.usage, "--icon and --url hold at most 255 characters")
        }
        let store = try await storage.open()
        let record = ChannelRecord(
            address: channel, name: name, icon: icon, url: url, createdAt: Int64(Date().timeIntervalSince1970))
        try await store.saveChannel(record)
        try await store.close()
        if global.json { try Terminal.printJSON(ChannelRow(record)) } else { print("channel \(channel) \(name)") }
    }
}

struct ChannelList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the channels.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var storage: DatabaseOption

    func run() async throws {
        let store = try await storage.open()
        let channels = try await store.channels()
        try await store.close()
        if global.json {
            try Terminal.printJSON(channels.map(ChannelRow.init))
        } else if channels.isEmpty {
            print("no channels; add one with `herald channel add ADDRESS --name NAME`")
        } else {
            for channel in channels { print("\(channel.address.checksummed)  \(channel.name)  \(channel.url)") }
        }
    }
}

struct ChannelRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a channel and its subscriptions.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var storage: DatabaseOption

    @Argument(help: "The channel's wallet address.") var address: String

    func run() async throws {
        let channel = try EthereumAddress.argument(address)
        let store = try await storage.open()
        let removed = try await store.removeChannel(channel)
        try await store.close()
        guard removed else { throw CLIError(.usage, "no channel \(channel)") }
        print("removed channel \(channel)")
    }
}

struct ChannelInvite: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite", abstract: "Print an invitation URL that `herald subscribe` (or an app) accepts.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var storage: DatabaseOption

    @Argument(help: "The channel's wallet address.") var address: String
    @Option(
        name: .long, help: "The Herald server subscribers will use (its audience and chain id go in the invitation).")
    var server: String

    func run() async throws {
        let channel = try EthereumAddress.argument(address)
        let store = try await storage.open()
        let record = try await store.channel(channel)
        try await store.close()
        guard let record else { throw CLIError(.usage, "no channel \(channel); add it with `herald channel add`") }
        let client = try HeraldHTTPClient(server: server)
        let info = try await client.info()
        let invitation = Invitation(
            id: UUID().uuidString.lowercased(), label: record.name, channel: channel,
            server: client.server.absoluteString.trimmingTrailingSlashes, audience: info.audience,
            chainId: info.chainId,
            icon: record.icon, url: record.url)
        print(global.json ? invitation.json.jsonText : invitation.urlString)
    }
}
