import ArgumentParser
import HeraldCLISupport
import HeraldCore

/// Who signs for a channel: the channel's own keystore wallet, or (docs/protocol.md §11.1) the selected
/// wallet as a delegate of the channel named.
struct SenderOptions: ParsableArguments {
    @Option(name: .customLong("channel-wallet"), help: "The channel's keystore wallet (name or address).")
    var channelWallet: String?
    @Option(
        name: .customLong("as-delegate-of"),
        help: "Sign for this channel with the selected wallet (--wallet), one of its delegates.")
    var delegateOf: String?

    /// The channel a delegate signs for; nil when the channel's own wallet signs.
    func delegatedChannel() throws -> EthereumAddress? {
        guard let delegateOf else { return nil }
        guard channelWallet == nil else {
            throw CLIError(.usage, "give --channel-wallet or --as-delegate-of, not both")
        }
        return try EthereumAddress.argument(delegateOf, what: "a channel address")
    }

    /// The keystore wallet that signs: the channel's, or nil for `--wallet`'s (the delegate's).
    var wallet: String? { delegateOf == nil ? channelWallet : nil }
}

/// `herald send status SID`: the pushes of one item (`GET /v1/notifications/{sid}`), read with a
/// FeedAccess of the channel's wallet or of the delegate that signed the item.
struct SendStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "The pushes of one sent item, for the channel or the delegate that sent it.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The item's sid.") var sid: String
    @OptionGroup var sender: SenderOptions
    @Option(name: .long, help: "Herald server URL.") var server: String
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?

    func run() async throws {
        guard !sid.isEmpty, sid.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw CLIError(.usage, "\(sid) is not a sid (decimal digits)")
        }
        _ = try sender.delegatedChannel()
        let session = try await SigningSession.open(
            global: global, server: server, acceptAudience: audience, wallet: sender.wallet)
        let answer = try await session.client.send(
            method: .GET, path: "/v1/notifications/\(sid)", body: nil,
            headers: [("Authorization", try session.feedAccessHeader())])
        if global.json {
            print(answer.jsonText)
            return
        }
        print(
            "sid \(sid) to \(answer["recipient"]?.stringValue ?? "?"), signed by \(answer["signer"]?.stringValue ?? "?")"
        )
        guard case .array(let pushes)? = answer["pushes"], !pushes.isEmpty else {
            print("no pushes")
            return
        }
        for push in pushes {
            let error = push["lastError"]?.stringValue.map { "  " + $0 } ?? ""
            print(
                "\(push["platform"]?.stringValue ?? "?")  \(push["status"]?.stringValue ?? "?")  attempts \(push["attempts"]?.jsonText ?? "?")\(error)"
            )
        }
    }
}
