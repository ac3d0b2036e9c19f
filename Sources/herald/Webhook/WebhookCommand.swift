import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore

/// `herald webhook set|remove|verify` (docs/protocol.md §11.3): where a channel hears of its subscribers and
/// its failed pushes, and how a receiver checks that a delivery came from the server.
struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook", abstract: "Set or remove a channel's webhook, or check a delivery's signature.",
        subcommands: [WebhookSet.self, WebhookRemove.self, WebhookVerify.self])
}

/// What `set` and `remove` share: sign a Webhook with the channel's keystore wallet and print the answer.
struct WebhookChangeOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @Option(name: .customLong("channel-wallet"), help: "The channel's keystore wallet (name or address).")
    var channelWallet: String?
    @Option(name: .long, help: "Herald server URL.") var server: String
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?

    func send(url: String, events: String) async throws {
        let session = try await SigningSession.open(
            global: global, server: server, acceptAudience: audience, wallet: channelWallet)
        let (issuedAt, expiresAt) = session.window
        let operation: WebhookUpdate
        do {
            operation = try WebhookUpdate(
                channel: session.key.address, url: url, events: events, audience: session.info.audience,
                nonce: UInt256.randomNonce(), issuedAt: issuedAt, expiresAt: expiresAt)
        } catch { throw CLIError(.usage, error.message) }
        let reply = try await session.client.postOperation(
            "/v1/webhooks", json: session.sign(operation, scheme: .eip712).jsonText,
            expiresAt: expiresAt.clampedInt64)
        let answer = reply.json
        if global.json {
            print(answer.jsonText)
            return
        }
        let status = answer["status"]?.stringValue ?? "?"
        if status == "set" {
            let kinds = operation.eventSet.text
            print("set \(answer["url"]?.stringValue ?? url) for \(session.key.address): \(kinds)")
        } else {
            print("\(status): the webhook of \(session.key.address)")
        }
    }
}

struct WebhookSet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Send the channel's events to URL (replacing its webhook, if any).")
    @Argument(help: "The receiver's https:// URL (http:// only to an address the server's operator allows).")
    var url: String
    @Option(name: .long, help: "Comma-separated: subscribed, unsubscribed, failed.")
    var events = "subscribed,unsubscribed,failed"
    @OptionGroup var options: WebhookChangeOptions

    func run() async throws {
        guard !url.isEmpty else { throw CLIError(.usage, "give the receiver's URL (herald webhook remove removes it)") }
        try await options.send(url: url, events: events)
    }
}

struct WebhookRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove the channel's webhook and drop its queued events.")
    @OptionGroup var options: WebhookChangeOptions
    func run() async throws { try await options.send(url: "", events: "") }
}

/// Checks a delivery as a receiver would: the raw body's EIP-191 signature must recover to the server's
/// `webhookSigner` (`GET /v1/info`).
struct WebhookVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a webhook delivery's Herald-Signature against the server's webhookSigner.")

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "The server's webhookSigner (from GET /v1/info).") var signer: String
    @Option(name: .long, help: "The Herald-Signature header's value (or HERALD_SIGNATURE).") var signature: String?
    @Argument(help: "The body, byte for byte: a file, or - (the default) for stdin.") var file = "-"

    func run() async throws {
        let expected = try EthereumAddress.argument(signer, what: "the signer's address")
        guard let header = signature ?? ProcessInfo.processInfo.environment["HERALD_SIGNATURE"] else {
            throw CLIError(.usage, "give the Herald-Signature header with --signature (or HERALD_SIGNATURE)")
        }
        let body = try readBody()
        let recovered: EthereumAddress
        do {
            let parsed = try RecoverableSignature(hex: header.trimmingCharacters(in: .whitespaces))
            recovered = try parsed.recoverPublicKey(digest: PersonalMessage.digest(body)).address
        } catch {
            throw CLIError(.badInput, "the signature is malformed: \(error.reason)")
        }
        let valid = recovered == expected
        if global.json {
            let events: Int
            if case .array(let items)? = (try? JSONParser.parse(body))?["events"] {
                events = items.count
            } else {
                events = 0
            }
            print(
                JSONValue.object([
                    ("valid", .bool(valid)), ("recovered", .string(recovered.checksummed)),
                    ("events", .number(String(events))),
                ]).jsonText)
            if !valid { throw ExitCode(1) }
            return
        }
        guard valid else {
            throw CLIError(.unexpected, "the signature recovers to \(recovered), not \(expected): not from this server")
        }
        print("valid: signed by \(recovered)")
    }

    private func readBody() throws -> [UInt8] {
        if file == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw CLIError(.usage, "cannot read \(file)")
        }
        return Array(data)
    }
}
