import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore

struct SubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe", abstract: "Subscribe your wallet to a channel, by address or invitation URL.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "A channel address, or an invitation URL (…?c_i=…) from `herald channel invite`.")
    var target: String

    @Option(name: .long, help: "Herald server URL (taken from the invitation when one is given).")
    var server: String?

    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned on first use.")
    var audience: String?

    func run() async throws {
        let invitation = try Invitation.decode(target)
        let channel =
            try invitation?.channel
            ?? EthereumAddress.argument(target, what: "a channel address or an invitation URL (…?c_i=…)")
        if let invitation, let server, server.trimmingTrailingSlashes != invitation.server.trimmingTrailingSlashes {
            throw CLIError(.usage, "the invitation is for \(invitation.server), not \(server)")
        }
        guard let serverURL = server ?? invitation?.server else { throw CLIError(.usage, "give --server URL") }
        let session = try await SigningSession.open(global: global, server: serverURL, acceptAudience: audience)
        if let invitation, invitation.audience != session.info.audience || invitation.chainId != session.info.chainId {
            throw CLIError(
                .refused,
                "the invitation names audience \(invitation.audience) chain \(invitation.chainId), but the server reports "
                    + "\(session.info.audience) chain \(session.info.chainId): not subscribing")
        }
        // A scanned-twice invitation must not sign a second operation: look first.
        let current = try await SubscriptionsCommand.list(session)
        if let existing = current.first(where: { $0.channel == channel }) {
            print("already subscribed to \(existing.name) (\(channel)) since \(existing.since); nothing sent")
            return
        }
        try await Self.change(.subscribe, channel: channel, session: session, json: global.json)
    }

    static func change(
        _ action: Subscription.Action, channel: EthereumAddress, session: SigningSession, json: Bool
    ) async throws {
        let (issuedAt, expiresAt) = session.window
        let operation = Subscription(
            action: action, channel: channel, subscriber: session.key.address, audience: session.info.audience,
            nonce: UInt256.randomNonce(), issuedAt: issuedAt, expiresAt: expiresAt)
        let answer = try await session.client.post(
            "/v1/subscriptions", json: session.sign(operation, scheme: .eip712).jsonText)
        if json {
            print(answer.jsonText)
        } else {
            print("\(answer["status"]?.stringValue ?? "?"): \(session.key.address) → \(channel)")
        }
    }
}

struct UnsubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unsubscribe", abstract: "Unsubscribe your wallet from a channel.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The channel address.") var channel: String
    @Option(name: .long, help: "Herald server URL.") var server: String
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?

    func run() async throws {
        let address = try EthereumAddress.argument(channel, what: "a channel address")
        let session = try await SigningSession.open(global: global, server: server, acceptAudience: audience)
        try await SubscribeCommand.change(.unsubscribe, channel: address, session: session, json: global.json)
    }
}

struct SubscriptionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscriptions", abstract: "List your wallet's subscriptions on a server (signed FeedAccess).")

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Herald server URL.") var server: String
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?

    /// One entry of the listing, with what docs/protocol.md §10 adds: unread items, the effective settings,
    /// the mute's end (0: none).
    struct Row {
        let channel: EthereumAddress
        let name: String
        let since: Int64
        let unread: Int
        let settings: JSONValue
        let mutedUntil: Int64

        var json: JSONValue {
            .object([
                ("channel", .string(channel.checksummed)), ("name", .string(name)), ("since", .number(String(since))),
                ("unread", .number(String(unread))), ("settings", settings),
                ("mutedUntil", .number(String(mutedUntil))),
            ])
        }
    }

    func run() async throws {
        let session = try await SigningSession.open(global: global, server: server, acceptAudience: audience)
        let rows = try await Self.list(session)
        if global.json {
            print(JSONValue.array(rows.map(\.json)).jsonText)
        } else if rows.isEmpty {
            print("no subscriptions")
        } else {
            for row in rows {
                let muted = row.mutedUntil > 0 ? "  muted until \(row.mutedUntil)" : ""
                print("\(row.channel)  \(row.name)  since \(row.since)  \(row.unread) unread\(muted)")
            }
        }
    }

    static func list(_ session: SigningSession) async throws -> [Row] {
        let answer = try await session.client.send(
            method: .GET, path: "/v1/users/\(session.key.address.checksummed)/subscriptions", body: nil,
            headers: [("Authorization", try session.feedAccessHeader())])
        guard case .array(let items)? = answer["subscriptions"] else {
            throw CLIError(.unreachable, "the server answered subscriptions without a list")
        }
        return items.compactMap { item in
            guard let channel = item["channel"]?.stringValue.flatMap({ try? EthereumAddress(parsing: $0) }),
                case .number(let since)? = item["since"]
            else { return nil }
            func integer(_ key: String) -> Int64 {
                if case .number(let text)? = item[key] { return Int64(text) ?? 0 }
                return 0
            }
            return Row(
                channel: channel, name: item["name"]?.stringValue ?? "", since: Int64(since) ?? 0,
                unread: Int(integer("unread")), settings: item["settings"] ?? .object([]),
                mutedUntil: integer("mutedUntil"))
        }
    }
}
