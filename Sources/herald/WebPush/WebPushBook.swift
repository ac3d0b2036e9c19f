import Foundation
import HeraldCLISupport
import HeraldCore

/// The subscriptions `herald webpush subscribe` made, in `$HERALD_HOME/webpush.json` (mode 0600,
/// written atomically): each holds the private key that reads every push sent to it.
struct WebPushBook {
    struct Entry: Codable, Equatable {
        var endpoint: String
        /// base64url, unpadded: the public key and auth secret the server encrypts for.
        var p256dh: String
        var auth: String
        /// base64url of the 32-byte P-256 private key. Never printed.
        var privateKey: String
        /// EIP-55.
        var wallet: String
        var server: String
    }

    let home: String
    var path: String { home + "/webpush.json" }

    private struct File: Codable {
        var subscriptions: [Entry]
    }

    func load() throws -> [Entry] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        do {
            return try JSONDecoder().decode(File.self, from: data).subscriptions
        } catch {
            throw CLIError(.badInput, "\(path) is damaged: not a Web Push subscription list")
        }
    }

    func save(_ entries: [Entry]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do {
            try AtomicFile.makeFolder(home)
            try AtomicFile.write(Array(try encoder.encode(File(subscriptions: entries))), to: path, replace: true)
        } catch let error as HeraldError {
            throw CLIError(.unexpected, "cannot save \(path): \(error.reason)")
        }
    }

    /// Keeps `entry`, replacing one for the same endpoint, wallet and server.
    func keep(_ entry: Entry) throws {
        var entries = try load().filter { !$0.sameSubscription(as: entry) }
        entries.append(entry)
        try save(entries)
    }

    func drop(_ entry: Entry) throws {
        try save(try load().filter { !$0.sameSubscription(as: entry) })
    }
}

extension WebPushBook.Entry {
    func sameSubscription(as other: Self) -> Bool {
        endpoint == other.endpoint && wallet == other.wallet && server == other.server
    }

    /// The JSON `webpush list --json` prints: never the private key.
    var listed: JSONValue {
        .object([
            ("endpoint", .string(endpoint)), ("p256dh", .string(p256dh)), ("auth", .string(auth)),
            ("wallet", .string(wallet)), ("server", .string(server)),
        ])
    }
}
