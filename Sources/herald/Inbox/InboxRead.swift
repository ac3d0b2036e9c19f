import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldInbox

/// `herald inbox read NID…|--all [--server URL]` (docs/protocol.md §6, §10): marks cached rows read and, with
/// a server, the same items there, so that the wallet's other devices and badges follow.
struct InboxRead: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Mark items read here and, with --server, on the server (your other devices follow).")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "nids to mark read.") var nids: [Int64] = []
    @Flag(name: .long, help: "Every item of the wallet.") var all = false
    @Option(name: .long, help: "Herald server URL: send ReadMarks for the items too.") var server: String?
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?

    func run() async throws {
        guard all != !nids.isEmpty else { throw CLIError(.usage, "give nids or --all") }
        let walletKey = try InboxCommand.walletKey(global)
        let store = try InboxCommand.open(global)
        let marked = try store.markRead(nids: all ? nil : nids, walletKey: walletKey)
        var unread = try store.count(walletKey: walletKey, visibility: .unread)
        if let server {
            let session = try await SigningSession.open(global: global, server: server, acceptAudience: audience)
            if let answer = try await Self.mark(all: all, sids: marked.sids, store: store, session: session) {
                unread = answer
            }
        }
        if global.json {
            print(
                JSONValue.object([("read", .number(String(marked.changed))), ("unread", .number(String(unread)))])
                    .jsonText)
        } else {
            print("marked \(marked.changed) item(s) read; \(unread) unread")
        }
    }

    /// The ReadMarks: with `all`, one with `upTo` the largest cached sid (sids are issued in order); else
    /// the sids, at most 100 a mark. nil when there was nothing to send.
    static func mark(
        all: Bool, sids: [Int64], store: InboxStore, session: SigningSession
    ) async throws -> Int? {
        var unread: Int?
        if all {
            guard let largest = try store.largestSid(wallet: session.key.address) else { return nil }
            unread = try await send(sids: [], upTo: largest, session: session)
        } else {
            var rest = sids[...]
            while !rest.isEmpty {
                let chunk = rest.prefix(ReadMark.maximumSids)
                rest = rest.dropFirst(chunk.count)
                unread = try await send(sids: Array(chunk), upTo: 0, session: session)
            }
        }
        return unread
    }

    private static func send(sids: [Int64], upTo: Int64, session: SigningSession) async throws -> Int {
        let (issuedAt, expiresAt) = session.window
        let operation = try ReadMark(
            wallet: session.key.address, sids: ReadMark.sidsText(sids), upTo: UInt256(UInt64(upTo)),
            audience: session.info.audience, nonce: UInt256.randomNonce(), issuedAt: issuedAt, expiresAt: expiresAt)
        let answer = try await session.client.post("/v1/read", json: session.sign(operation, scheme: .eip712).jsonText)
        guard case .number(let text)? = answer["unread"], let unread = Int(text) else {
            throw CLIError(.unreachable, "the server answered a read mark without an unread count")
        }
        return unread
    }
}
