import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldInbox

struct InboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inbox",
        abstract: "The local message cache ($HERALD_HOME/inbox.sqlite, the EPNS feed schema).",
        subcommands: [
            InboxSync.self, InboxIngest.self, InboxList.self, InboxShow.self, InboxHide.self, InboxUnhide.self,
            InboxCount.self, InboxRead.self,
        ]
    )

    static func open(_ global: GlobalOptions) throws -> InboxStore {
        do {
            return try InboxStore(path: global.homePath + "/inbox.sqlite")
        } catch {
            throw CLIError(.unexpected, "cannot open \(global.homePath)/inbox.sqlite: \(error)")
        }
    }

    /// The `wallet` column a command acts on: a Bisq pseudo-wallet (`--wallet bisq:<16 hex>`, docs/protocol.md §8)
    /// as it is, otherwise the selected keystore wallet's EIP-55 address.
    static func walletKey(_ global: GlobalOptions) throws -> String {
        if let selector = global.walletSelector, selector.hasPrefix("bisq:") {
            let digest = selector.dropFirst("bisq:".count)
            guard digest.count == 16, digest.utf8.allSatisfy({ Hex.nibbleValue($0) != nil }) else {
                throw CLIError(.usage, "a Bisq pseudo-wallet is bisq: and 16 hex characters")
            }
            return "bisq:" + digest.lowercased()
        }
        return try global.selectWallet().address.checksummed
    }
}

/// One row as `--json` prints it: the `feed` columns by their schema names (CLI.md).
struct InboxRowJSON {
    static func make(_ row: InboxStore.Row, decrypted: Bool?) -> JSONValue {
        let item = row.item
        var members: [(key: String, value: JSONValue)] = [
            // A Bisq row (a `bisq:` pseudo-wallet) came from no Herald server: its sid is NULL.
            ("nid", .number(String(row.nid))),
            ("sid", row.wallet.hasPrefix("bisq:") ? .null : .number(String(item.sid))),
            ("type", .number(String(item.type))),
            ("app", .string(item.app)), ("icon", .string(item.icon)), ("url", .string(item.url)),
            ("appbot", .number("0")),
            ("secret", .string(item.secret)), ("asub", .string(item.subject)), ("amsg", .string(item.message)),
            ("acta", .string(item.callToAction)), ("aimg", .string(item.image)),
            ("hidden", .number(row.hidden ? "1" : "0")),
            ("epoch", .number(String(item.epoch))), ("wallet", .string(row.wallet)),
            ("read", .number(row.read ? "1" : "0")),
            ("channel", item.sender.map { .string($0.checksummed) } ?? .null),
        ]
        if let decrypted { members.append(("decrypted", .bool(decrypted))) }
        return .object(members)
    }
}

struct InboxIngest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Cache one push as APNs or FCM delivers it (what a phone does when it arrives).")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "A file holding the push JSON, or - for standard input (the default).") var file: String = "-"
    @Option(
        name: .customLong("bisq-key"),
        help: ArgumentHelp(
            "Read a Bisq push and decrypt it with this pairing key (docs/protocol.md §8).", valueName: "KEY"))
    var bisqKey: String?
    @Flag(name: .long, help: "Read a Web Push body (raw aes128gcm bytes) and decrypt it with a kept subscription.")
    var webpush = false
    @Option(name: .long, help: "With --webpush: the subscription it was sent to (otherwise each kept one is tried).")
    var endpoint: String?

    func run() async throws {
        if let bisqKey {
            try BisqIngest(global: global, key: bisqKey).run(Array(try readInput()))
            return
        }
        if webpush {
            try WebPushIngest(global: global, endpoint: endpoint).run(Array(try readInput()))
            return
        }
        if endpoint != nil { throw CLIError(.usage, "--endpoint goes with --webpush") }
        let wallet = try global.selectWallet()
        let data = try readInput()
        let item: FeedItem
        do {
            item = try FeedItem.parse(push: try JSONParser.parse(Array(data)))
        } catch let error as InboxError {
            throw CLIError(.badInput, "not cached: \(error.description)")
        } catch let error as HeraldError {
            throw CLIError(.badInput, "not cached: \(error.reason)")
        }
        let added = try InboxCommand.open(global).insert([item], wallet: wallet.address)
        print(
            added == 1
                ? "cached sid \(item.sid) (type \(item.type)) for \(wallet.address)"
                : "sid \(item.sid) was already cached")
    }

    private func readInput() throws -> Data {
        if file == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let contents = FileManager.default.contents(atPath: file) else {
            throw CLIError(.usage, "cannot read \(file)")
        }
        return contents
    }
}

struct InboxList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Cached items, newest first.")

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "At most this many rows.") var limit: Int = 20
    @Option(name: .long, help: "Skip this many rows.") var offset: Int = 0
    @Flag(name: .long, help: "Every row, hidden ones included, no limit.") var all = false
    @Flag(name: .long, help: "Hidden rows only.") var hidden = false
    @Option(
        name: .long,
        help: "Only this channel's items: its address (items from `inbox sync`) or its app name (any item).")
    var channel: String?
    @Flag(name: .long, help: "Decrypt type-2 items in memory (asks for the passphrase once).") var decrypt = false

    func run() async throws {
        guard limit >= 0, offset >= 0 else { throw CLIError(.usage, "--limit and --offset must be ≥ 0") }
        let walletKey = try InboxCommand.walletKey(global)
        let rows = try InboxCommand.open(global).list(
            walletKey: walletKey, visibility: all ? .all : hidden ? .hidden : .visible,
            channel: channel.map { text in (try? EthereumAddress(parsing: text)).map { .address($0) } ?? .app(text) },
            limit: all ? nil : limit, offset: offset)
        let key = decrypt && rows.contains { $0.item.type == 2 } ? try unlock(global.selectWallet()) : nil
        let shown = rows.map { row -> (InboxStore.Row, Bool) in
            guard let key, row.item.type == 2, let plain = try? row.item.decrypted(with: key) else {
                return (row, false)
            }
            return (row.with(plain), true)
        }
        if global.json {
            print(JSONValue.array(shown.map { InboxRowJSON.make($0.0, decrypted: decrypt ? $0.1 : nil) }).jsonText)
            return
        }
        if shown.isEmpty { print("no items") }
        for (row, opened) in shown {
            let text =
                row.item.type == 2 && !opened
                ? "🔒 secret message (use --decrypt)"
                : row.item.subject.isEmpty ? row.item.message : "\(row.item.subject): \(row.item.message)"
            // An unread row is marked, as mail clients mark one.
            print("\(row.read ? " " : "•") \(row.nid)  \(row.item.app)  \(text)")
        }
    }

    func unlock(_ wallet: KeystoreDirectory.Entry) throws -> PrivateKey {
        try wallet.keystore.decrypt(
            passphrase: PassphraseSource(options: global).unlock(prompt: "Passphrase for \(wallet.name): "))
    }
}

struct InboxShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "One item; type 2 is decrypted in memory.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The item's nid.") var nid: Int64

    func run() async throws {
        let walletKey = try InboxCommand.walletKey(global)
        guard let row = try InboxCommand.open(global).row(nid: nid, walletKey: walletKey) else {
            throw CLIError(.usage, "no item \(nid) for \(walletKey)")
        }
        var shown = row
        if row.item.type == 2 {
            let wallet = try global.selectWallet()
            let key = try wallet.keystore.decrypt(
                passphrase: PassphraseSource(options: global).unlock(prompt: "Passphrase for \(wallet.name): "))
            do throws(HeraldError) {
                shown = row.with(try row.item.decrypted(with: key))
            } catch {
                throw CLIError(
                    .badInput,
                    "item \(nid) (sid \(row.item.sid)) does not decrypt with this wallet's key: \(error.reason)")
            }
        }
        if global.json {
            print(InboxRowJSON.make(shown, decrypted: row.item.type == 2).jsonText)
        } else {
            let item = shown.item
            print("\(item.app)  sid \(item.sid)  type \(item.type)  epoch \(item.epoch)")
            if !item.subject.isEmpty { print(item.subject) }
            print(item.message)
            if !item.callToAction.isEmpty { print("→ \(item.callToAction)") }
        }
    }
}

struct InboxHide: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hide", abstract: "Archive items (hidden = 1).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "nids to hide.") var nids: [Int64] = []
    @Flag(name: .long, help: "Every item of the wallet.") var all = false

    func run() async throws { try InboxVisibility.set(true, nids: nids, all: all, global: global) }
}

struct InboxUnhide: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unhide", abstract: "Bring archived items back.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "nids to unhide.") var nids: [Int64] = []
    @Flag(name: .long, help: "Every item of the wallet.") var all = false

    func run() async throws { try InboxVisibility.set(false, nids: nids, all: all, global: global) }
}

enum InboxVisibility {
    static func set(_ hidden: Bool, nids: [Int64], all: Bool, global: GlobalOptions) throws {
        guard all != !nids.isEmpty else { throw CLIError(.usage, "give nids or --all") }
        let walletKey = try InboxCommand.walletKey(global)
        let changed = try InboxCommand.open(global).setHidden(hidden, nids: all ? nil : nids, walletKey: walletKey)
        print("\(hidden ? "hid" : "unhid") \(changed) item(s)")
    }
}

struct InboxCount: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "count", abstract: "How many items are cached.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Only items neither read nor hidden.") var unread = false

    func run() async throws {
        let walletKey = try InboxCommand.walletKey(global)
        let count = try InboxCommand.open(global).count(walletKey: walletKey, visibility: unread ? .unread : .all)
        print(global.json ? "{\"count\":\(count)}" : String(count))
    }
}
