import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldInbox

/// `herald inbox ingest --bisq-key KEY`: what a Bisq phone app does with a push (docs/protocol.md §8). The
/// message is decrypted in memory; only user-facing kinds reach the cache, as rows of the pairing's
/// pseudo-wallet, and ERASE empties that pseudo-wallet.
struct BisqIngest {
    let global: GlobalOptions
    let key: String

    func run(_ input: [UInt8]) throws {
        guard BisqKey.isValid(key) else { throw CLIError(.usage, "--bisq-key takes the 32-character pairing key") }
        let message: BisqMessage
        do {
            message = try BisqMessageCipher.decrypt(try encryptedMessage(input), key: key)
        } catch let error as HeraldError {
            throw CLIError(.badInput, "not a Bisq message for this key: \(error.reason)")
        }
        let wallet = BisqKey.pseudoWallet(forKey: key)
        let outcome: String
        switch message.type {
        case .setupConfirmation:
            outcome = "setup confirmation for \(wallet) (not cached)"
        case .erase:
            let erased = try InboxCommand.open(global).deleteAll(walletKey: wallet)
            outcome = "erase: deleted \(erased) item(s) of \(wallet)"
        default:
            let added = try InboxCommand.open(global).insertBisq(message, walletKey: wallet)
            outcome = added ? "cached \(message.type.rawValue) for \(wallet)" : "already cached for \(wallet)"
        }
        if global.json {
            print(message.jsonValue.jsonText)
            return
        }
        print(outcome)
        if message.type.isUserFacing {
            print(message.title.isEmpty ? message.message : "\(message.title): \(message.message)")
        }
    }

    /// The push as APNs or FCM delivers it, or the bare `BisqMessage…|iv|ciphertext` text.
    private func encryptedMessage(_ input: [UInt8]) throws -> String {
        let text = String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix(BisqMessageCipher.iosMagic + "|") || text.hasPrefix(BisqMessageCipher.androidMagic + "|") {
            return text
        }
        return try BisqPush.encryptedMessage(in: JSONParser.parse(Array(text.utf8)))
    }
}
