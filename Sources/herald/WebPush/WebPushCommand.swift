import ArgumentParser
import Crypto
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldRelay

/// `herald webpush …`: the subscriber's side of docs/protocol.md §9 (the CLI plays the browser or the
/// UnifiedPush app), and the operator's VAPID key.
struct WebPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush",
        abstract: "Web Push subscriptions (browsers, UnifiedPush) and the server's VAPID key.",
        subcommands: [WebPushSubscribe.self, WebPushUnsubscribe.self, WebPushList.self, WebPushKeygen.self])
}

/// The options subscribe and unsubscribe share.
struct WebPushOptions: ParsableArguments {
    @Option(name: .long, help: "Herald server URL, e.g. http://127.0.0.1:8080.")
    var server: String

    @Option(name: .long, help: "The push service endpoint (https://…) a browser or UnifiedPush distributor gave.")
    var endpoint: String

    @Option(name: .long, help: "Signature scheme: eip712 (typed data) or eip191 (personal_sign of the text form).")
    var scheme: String = "eip712"

    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned on first use.")
    var audience: String?

    func validatedScheme() throws -> SignatureScheme {
        guard let scheme = SignatureScheme(rawValue: scheme) else {
            throw CLIError(.usage, "--scheme must be eip712 or eip191")
        }
        return scheme
    }

    /// Signs and posts a WebPushBinding for `entry`'s subscription.
    func post(
        _ action: WebPushBinding.Action, entry: WebPushBook.Entry, session: SigningSession
    ) async throws
        -> JSONValue
    {
        let (issuedAt, expiresAt) = session.window
        let binding = WebPushBinding(
            action: action, wallet: session.key.address, endpoint: entry.endpoint, p256dh: entry.p256dh,
            auth: entry.auth, audience: session.info.audience, nonce: UInt256.randomNonce(),
            issuedAt: issuedAt, expiresAt: expiresAt)
        return try await session.client.post(
            "/v1/webpush", json: session.sign(binding, scheme: try validatedScheme()).jsonText)
    }
}

struct WebPushSubscribe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "Make a subscription's keys, keep them in $HERALD_HOME/webpush.json and bind it to your wallet.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: WebPushOptions

    func run() async throws {
        _ = try options.validatedScheme()
        let privateKey = P256.KeyAgreement.PrivateKey()
        let p256dh = Base64URL.encode(Array(privateKey.publicKey.x963Representation))
        let auth = Base64URL.encode(SecureRandom.bytes(16))
        do {
            // The form only: whether its network may be reached is the server's to judge (§9).
            _ = try WebPushSubscription(endpoint: options.endpoint, p256dh: p256dh, auth: auth, policy: nil)
        } catch {
            throw CLIError(.badInput, "--endpoint: \(error.message)")
        }
        let session = try await SigningSession.open(
            global: global, server: options.server, acceptAudience: options.audience)
        let entry = WebPushBook.Entry(
            endpoint: options.endpoint, p256dh: p256dh, auth: auth,
            privateKey: Base64URL.encode(Array(privateKey.rawRepresentation)),
            wallet: session.key.address.checksummed, server: session.client.server.absoluteString)
        let book = WebPushBook(home: global.homePath)
        // Kept before the request: a push may arrive before the answer does.
        try book.keep(entry)
        let answer: JSONValue
        do {
            answer = try await options.post(.register, entry: entry, session: session)
        } catch let error as CLIError where error.code == .refused {
            try book.drop(entry)
            throw error
        }
        let status = answer["status"]?.stringValue ?? "?"
        if global.json {
            print(
                JSONValue.object([
                    ("endpoint", .string(entry.endpoint)), ("p256dh", .string(p256dh)), ("auth", .string(auth)),
                    ("wallet", .string(entry.wallet)), ("status", .string(status)),
                ]).jsonText)
        } else {
            print(
                "\(status): \(entry.wallet) webpush \(WebPushEndpoint.logOrigin(entry.endpoint))/… on \(entry.server)")
        }
    }
}

struct WebPushUnsubscribe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unsubscribe", abstract: "Unbind a kept subscription from your wallet and forget its keys.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: WebPushOptions

    func run() async throws {
        let session = try await SigningSession.open(
            global: global, server: options.server, acceptAudience: options.audience)
        let book = WebPushBook(home: global.homePath)
        let wallet = session.key.address.checksummed
        let server = session.client.server.absoluteString
        // An unregister is validated like a register; its keys are not compared (§9), so a subscription
        // this home no longer keeps is unbound with fresh ones.
        let entry =
            try book.load().first { $0.endpoint == options.endpoint && $0.wallet == wallet && $0.server == server }
            ?? WebPushBook.Entry(
                endpoint: options.endpoint,
                p256dh: Base64URL.encode(Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)),
                auth: Base64URL.encode(SecureRandom.bytes(16)), privateKey: "", wallet: wallet, server: server)
        let answer = try await options.post(.unregister, entry: entry, session: session)
        try book.drop(entry)
        if global.json {
            print(answer.jsonText)
        } else {
            let status = answer["status"]?.stringValue ?? "?"
            print("\(status): \(wallet) webpush \(WebPushEndpoint.logOrigin(entry.endpoint))/…")
        }
    }
}

struct WebPushList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "The kept subscriptions (never their private keys).")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let entries = try WebPushBook(home: global.homePath).load()
        if global.json {
            print(JSONValue.array(entries.map(\.listed)).jsonText)
            return
        }
        for entry in entries { print("\(entry.wallet)  \(entry.endpoint)  \(entry.server)") }
    }
}

struct WebPushKeygen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Write a new VAPID key (PEM, mode 0600) for --webpush-vapid-key-file; print its public key.")

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("Where to write the key; an existing file is refused.", valueName: "FILE"))
    var out: String

    func run() async throws {
        guard !FileManager.default.fileExists(atPath: out) else {
            throw CLIError(.usage, "\(out) exists: refusing to replace a VAPID key (subscriptions depend on it)")
        }
        let (pem, key) = VAPIDKey.generate()
        do {
            try AtomicFile.write(Array(pem.utf8), to: out)
        } catch {
            throw CLIError(.unexpected, "cannot write \(out): \(error.reason)")
        }
        if global.json {
            print(JSONValue.object([("file", .string(out)), ("publicKey", .string(key.publicKey))]).jsonText)
        } else {
            print(key.publicKey)
        }
    }
}
