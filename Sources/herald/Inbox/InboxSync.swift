import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldInbox

struct InboxSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Pull new items from the server's feed into the cache (signed FeedAccess).",
        discussion: """
            Pages newest first and stops at the first item already synced (an item cached from a push \
            does not stop it: older ones may be missing). Every new item is checked \
            (and a type 2 decrypted in memory, then discarded) before it is cached; one that fails is \
            reported with its sid and left out. New items are written in one transaction: an \
            interrupted sync caches nothing, and the next one fetches everything again.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Herald server URL.") var server: String
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?
    @Option(name: .customLong("page-size"), help: "Items per request (1–100).") var pageSize: Int = 100

    func run() async throws {
        guard (1...100).contains(pageSize) else { throw CLIError(.usage, "--page-size must be 1 to 100") }
        let session = try await SigningSession.open(global: global, server: server, acceptAudience: audience)
        let store = try InboxCommand.open(global)
        let progress = ProgressLine("inbox sync", total: nil, unit: "items", json: global.json)
        defer { progress.finish() }
        var pull = FeedPull(session: session, store: store, pageSize: pageSize, progress: progress)
        try await pull.run()
        let added = try store.insert(pull.fresh, wallet: session.key.address)
        // docs/protocol.md §10: read flags come along; read rows stay read.
        var marked = try store.markRead(sids: pull.readSids, wallet: session.key.address)
        marked += try await pull.catchUpReadFlags()
        progress.finish()
        if global.json {
            print(
                JSONValue.object([
                    ("added", .number(String(added))), ("skipped", .number(String(pull.skipped))),
                    ("fetched", .number(String(pull.fetched))), ("markedRead", .number(String(marked))),
                ]).jsonText)
        } else {
            let skippedText = pull.skipped > 0 ? ", \(pull.skipped) skipped (see above)" : ""
            let readText = marked > 0 ? ", \(marked) marked read" : ""
            print("synced \(session.key.address): \(added) new item(s)\(readText)\(skippedText)")
        }
    }
}

/// Pages through `GET /v1/users/{wallet}/feeds` until an item already cached or the end.
struct FeedPull {
    let session: SigningSession
    let store: InboxStore
    let pageSize: Int
    private(set) var fresh: [FeedItem] = []
    private(set) var skipped = 0
    private(set) var fetched = 0
    /// Items the server says are read (docs/protocol.md §10), among those paged through.
    private(set) var readSids: [Int64] = []
    /// The server's count of the wallet's unread items, from the first page.
    private(set) var serverUnread: Int?
    let progress: ProgressLine
    private var authorization: (header: String, until: Date)?

    init(session: SigningSession, store: InboxStore, pageSize: Int, progress: ProgressLine) {
        self.session = session
        self.store = store
        self.pageSize = pageSize
        self.progress = progress
    }

    mutating func run() async throws {
        var seen = Set<Int64>()
        var page = 1
        while true {
            let answer = try await session.client.send(
                method: .GET,
                path: "/v1/users/\(session.key.address.checksummed)/feeds?page=\(page)&limit=\(pageSize)&spam=false",
                body: nil, headers: [("Authorization", try header())])
            guard case .array(let items)? = answer["feeds"] else {
                throw CLIError(.unreachable, "the server answered feeds without a list")
            }
            let total = answer["itemcount"].flatMap { value -> Int? in
                if case .number(let text) = value { return Int(text) }
                return nil
            }
            if serverUnread == nil, case .number(let text)? = answer["unread"] { serverUnread = Int(text) }
            for entry in items {
                fetched += 1
                guard case .number(let sidText)? = entry["payload_id"], let sid = Int64(sidText) else {
                    report("an item without a payload_id", "it cannot be cached")
                    continue
                }
                if entry["read"] == .bool(true) { readSids.append(sid) }
                switch try store.origin(sid: sid, wallet: session.key.address) {
                // Synced before: so was everything older.
                case .feed: return
                // A push arrived for it, but older items may never have: keep going (and let the
                // synced copy give the row its channel, so the next sync stops here).
                case .push: break
                case nil: break
                }
                // Paging while new items arrive can show an item twice; it is cached once.
                guard seen.insert(sid).inserted else { continue }
                if let item = check(entry, sid: sid) { fresh.append(item) }
            }
            // The feed's size only bounds the work: the sync stops at the first item cached before.
            progress.update(
                done: fetched, total: nil, note: "page \(page)" + (total.map { ", \($0) in the feed" } ?? ""))
            if items.count < pageSize { return }
            page += 1
        }
    }

    /// When the cache still holds more unread rows than the server counts, items read elsewhere are
    /// further down the feed than the new ones: pages through it, marking what the server says is read,
    /// until the counts agree or the feed ends. Returns how many rows it marked.
    mutating func catchUpReadFlags() async throws -> Int {
        guard let serverUnread else { return 0 }
        let wallet = session.key.address
        var marked = 0
        var page = 1
        while try store.unreadSynced(wallet: wallet) > serverUnread {
            let answer = try await session.client.send(
                method: .GET, path: "/v1/users/\(wallet.checksummed)/feeds?page=\(page)&limit=100&spam=false",
                body: nil,
                headers: [("Authorization", try header())])
            guard case .array(let items)? = answer["feeds"] else {
                throw CLIError(.unreachable, "the server answered feeds without a list")
            }
            let read = items.compactMap { entry -> Int64? in
                guard entry["read"] == .bool(true), case .number(let text)? = entry["payload_id"] else { return nil }
                return Int64(text)
            }
            marked += try store.markRead(sids: read, wallet: wallet)
            if items.count < 100 { break }
            page += 1
        }
        return marked
    }

    /// The item if it is valid and, for type 2, decrypts with this wallet's key (plaintext discarded).
    private mutating func check(_ entry: JSONValue, sid: Int64) -> FeedItem? {
        var item: FeedItem
        do {
            item = try FeedItem.parse(push: entry["payload"] ?? .null)
        } catch {
            report("sid \(sid)", error.description)
            return nil
        }
        item.sender = entry["sender"]?.stringValue.flatMap { try? EthereumAddress(parsing: $0) }
        guard item.sid == sid else {
            report("sid \(sid)", "its payload names sid \(item.sid)")
            return nil
        }
        if item.type == 2 {
            do {
                _ = try item.decrypted(with: session.key)
            } catch {
                report("sid \(sid)", "does not decrypt with this wallet's key: \(error.reason)")
                return nil
            }
        }
        return item
    }

    private mutating func report(_ what: String, _ why: String) {
        skipped += 1
        progress.interrupt()
        Terminal.printWarning("skipped \(what): \(why)")
    }

    /// A FeedAccess header, signed again shortly before the last one expires (long syncs).
    private mutating func header() throws -> String {
        if let authorization, authorization.until > Date() { return authorization.header }
        let header = try session.feedAccessHeader()
        let validity = min(SigningSession.lifetime, session.info.maxValiditySeconds)
        authorization = (header, Date().addingTimeInterval(Double(validity) / 2))
        return header
    }
}
