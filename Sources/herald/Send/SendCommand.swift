import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore

/// `herald send …` sends (`herald send message`, the default) and `herald send status SID` reads one item's
/// pushes: the parser needs them as two subcommands, since sending's required options would otherwise be
/// asked of `status` too.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a notification as a channel (or its delegate), or show the pushes of one sent item.",
        subcommands: [SendMessage.self, SendStatus.self], defaultSubcommand: SendMessage.self)
}

struct SendMessage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "message",
        abstract: "Send a notification as a channel: broadcast (type 1), to recipients (3, 4) or secret (2).",
        discussion: """
            --title/--body fill the visible notification; the subject and message default to them. With \
            --secret the message is type 2: each recipient's public key is fetched from the server, a \
            fresh 15-character secret is encrypted to each (ECIES) and the fields with it (CryptoJS AES), \
            and the visible text is generic. A recipient without a published key stops the send (exit 3). \
            With --as-delegate-of CHANNEL the selected wallet (--wallet) signs for CHANNEL, of which it must be \
            a delegate (docs/protocol.md §11.1). `herald send` alone is `herald send message`.
            """)

    @OptionGroup var global: GlobalOptions

    @OptionGroup var sender: SenderOptions
    @Option(name: .long, help: "Herald server URL.") var server: String
    @Option(
        name: .customLong("to"), parsing: .upToNextOption, help: "Recipient addresses (type 3 for one, 4 for several).")
    var recipients: [String] = []
    @Flag(name: .long, help: "Send to every subscriber of the channel (type 1).") var broadcast = false
    @Option(name: .long, help: "Visible title (at most 80 characters).") var title: String
    @Option(name: .long, help: "Visible body (at most 256 characters).") var body: String
    @Option(name: .long, help: "Subject (asub; default: the title).") var subject: String?
    @Option(name: .long, help: "Message (amsg; default: the body).") var message: String?
    @Option(name: .long, help: "Call-to-action URL (acta).") var cta: String = ""
    @Option(name: .long, help: "Image URL (aimg).") var image: String = ""
    @Flag(name: .long, help: "Encrypt to each recipient (type 2).") var secret = false
    @Option(
        name: .long,
        help: "The channel setting that decides who gets it: ID (a toggle) or ID=N (a threshold, value N).")
    var setting: String?
    @Option(name: .long, help: "Push priority: high (the default) or normal (docs/protocol.md §11.4).")
    var priority: String?
    @Option(name: .long, help: "Seconds the pushes may wait, 0 to 2419200 (0: one attempt, now or never).")
    var ttl: Int64?
    @Option(
        name: .customLong("collapse-id"), help: "A newer push with this id replaces an older one (1-32 of A-Za-z0-9_-)."
    )
    var collapseID: String?
    @Option(name: .long, help: "Signature scheme: eip712 or eip191.") var scheme: String = "eip712"
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?

    func run() async throws {
        let addresses = try recipients.map { try EthereumAddress.argument($0, what: "a recipient address") }
        guard broadcast != !addresses.isEmpty else { throw CLIError(.usage, "give --to ADDRESS… or --broadcast") }
        if secret && broadcast {
            throw CLIError(.usage, "--secret needs --to: a secret message is encrypted to named recipients")
        }
        guard let signatureScheme = SignatureScheme(rawValue: scheme) else {
            throw CLIError(.usage, "--scheme must be eip712 or eip191")
        }
        let draft = NotificationDraft(
            title: title, body: body, subject: subject, message: message, callToAction: cta,
            image: image)
        // Keys first: a recipient without one stops the send before the passphrase is asked.
        let keys = secret ? try await Self.publicKeys(of: addresses, server: server) : []
        let payload = try Self.compose(
            draft, to: addresses, keys: keys, setting: try setting.map(Self.setting), push: try pushOptions())
        let channel = try sender.delegatedChannel()
        let session = try await SigningSession.open(
            global: global, server: server, acceptAudience: audience, wallet: sender.wallet)
        let (issuedAt, expiresAt) = session.window
        let operation = NotificationOperation(
            channel: channel ?? session.key.address, payload: payload, audience: session.info.audience,
            nonce: UInt256.randomNonce(), issuedAt: issuedAt, expiresAt: expiresAt)
        // A broadcast's 202 lists one sid per subscriber: about 12 bytes each, 12 MB for a million. One
        // signed envelope, sent again after a timeout or a 5xx: never a second message (§11.2).
        let reply = try await session.client.postOperation(
            "/v1/notifications", json: session.sign(operation, scheme: signatureScheme).jsonText,
            expiresAt: expiresAt.clampedInt64, answerLimit: 512 << 20)
        let answer = reply.json
        if global.json {
            print(Self.withReplayFlag(answer, reply.idempotentReplay).jsonText)
            return
        }
        let sids =
            answer["sid"].flatMap { value -> [String]? in
                guard case .array(let items) = value else { return nil }
                return items.compactMap(\.stringValue)
            } ?? []
        let recipientsText = Self.number(answer["recipients"])
        let pushesText = Self.number(answer["pushes"])
        let range = sids.count > 1 ? "sids \(sids.first ?? "")–\(sids.last ?? "")" : "sid \(sids.first ?? "-")"
        print("sent to \(recipientsText) recipient(s), \(pushesText) push(es) queued; \(range)" + Self.leftOut(answer))
    }

    /// protocol.md §10's recipients left out, when there are any: how many a setting filtered, and who was
    /// over the channel's per-wallet limit.
    /// The answer with `"idempotentReplay"` added (CLI.md): whether a retry got the first send's answer.
    static func withReplayFlag(_ answer: JSONValue, _ replay: Bool) -> JSONValue {
        guard let members = answer.objectMembers else { return answer }
        return .object(members + [(key: "idempotentReplay", value: .bool(replay))])
    }

    static func leftOut(_ answer: JSONValue) -> String {
        var text = ""
        if case .number(let filtered)? = answer["filtered"], filtered != "0" { text += "; \(filtered) filtered" }
        if case .array(let throttled)? = answer["throttled"], !throttled.isEmpty {
            text += "; throttled: " + throttled.compactMap(\.stringValue).joined(separator: ", ")
        }
        return text
    }

    /// The §4.1 payload, checked locally against the limits the server applies (exit 65 if over).
    static func compose(
        _ draft: NotificationDraft, to addresses: [EthereumAddress], keys: [(EthereumAddress, PublicKey)],
        setting: JSONValue? = nil, push: PushOptions = .none
    ) throws -> String {
        var payload: String
        if !keys.isEmpty {
            do {
                payload = try draft.secretPayload(to: keys.map { (address: $0.0, publicKey: $0.1) })
            } catch {
                throw CLIError(.unexpected, "cannot encrypt the message: \(error.reason)")
            }
        } else if addresses.isEmpty {
            payload = draft.broadcastPayload()
        } else {
            payload = draft.targetedPayload(to: addresses)
        }
        if let setting { payload = NotificationDraft.payload(payload, naming: setting.jsonText) }
        payload = NotificationDraft.payload(payload, pushing: push)
        do {
            _ = try NotificationPayload.parse(payload)
        } catch {
            throw CLIError(.badInput, "\(error.code.rawValue): \(error.message)")
        }
        return payload
    }

    /// `--priority`, `--ttl` and `--collapse-id` as the payload's `push` (docs/protocol.md §11.4); a bad value
    /// stops here, before anything is signed.
    func pushOptions() throws -> PushOptions {
        var parsed: PushOptions.Priority?
        if let priority {
            guard let value = PushOptions.Priority(rawValue: priority) else {
                throw CLIError(.usage, "--priority must be high or normal")
            }
            parsed = value
        }
        do {
            return try PushOptions(priority: parsed, timeToLive: ttl, collapseID: collapseID)
        } catch {
            throw CLIError(.usage, error.message)
        }
    }

    /// `--setting ID` or `--setting ID=N` as the payload's `setting` (docs/protocol.md §10).
    static func setting(_ text: String) throws -> JSONValue {
        guard let equals = text.firstIndex(of: "=") else { return .object([("id", .string(text))]) }
        guard let value = Int64(text[text.index(after: equals)...]) else {
            throw CLIError(.usage, "--setting takes ID or ID=N with N an integer, not \(text)")
        }
        return .object([("id", .string(String(text[..<equals]))), ("value", .number(String(value)))])
    }

    /// Each recipient's published key, checked against its address. No key: exit 3, nothing sent; a
    /// key of another address (a lying or broken server): exit 1, nothing sent.
    static func publicKeys(
        of addresses: [EthereumAddress], server: String
    ) async throws -> [(EthereumAddress, PublicKey)] {
        let client = try HeraldHTTPClient(server: server)
        var keys: [(EthereumAddress, PublicKey)] = []
        for address in addresses {
            let answer: JSONValue
            do {
                answer = try await client.send(method: .GET, path: "/v1/users/\(address.checksummed)/pubkey", body: nil)
            } catch let error as CLIError where error.code == .refused {
                throw CLIError(
                    .refused,
                    "recipient \(address) has no known public key (it has not signed anything on this server): nothing sent"
                )
            }
            guard let hex = answer["publicKey"]?.stringValue, let key = try? PublicKey(hex: hex) else {
                throw CLIError(.unexpected, "the server answered an unreadable public key for \(address): nothing sent")
            }
            guard key.address == address else {
                throw CLIError(
                    .unexpected,
                    "the server published for \(address) a key of \(key.address): refusing to encrypt to it, nothing sent"
                )
            }
            keys.append((address, key))
        }
        return keys
    }

    private static func number(_ value: JSONValue?) -> String {
        if case .number(let text)? = value { return text }
        return "?"
    }
}
