import Crypto
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldInbox

/// `herald inbox ingest --webpush`: what a browser's service worker or a UnifiedPush app does with a
/// Web Push body (docs/protocol.md §9). The body is decrypted in memory with a kept subscription's keys and
/// cached for that subscription's wallet; a setup confirmation or a body cut to `{type, sid, epoch}`
/// is printed, not cached (`inbox sync` fetches the item).
struct WebPushIngest {
    let global: GlobalOptions
    let endpoint: String?

    func run(_ body: [UInt8]) throws {
        var candidates = try WebPushBook(home: global.homePath).load()
        if let endpoint { candidates = candidates.filter { $0.endpoint == endpoint } }
        guard !candidates.isEmpty else {
            throw CLIError(
                .badInput,
                endpoint == nil ? "no kept Web Push subscription" : "no kept subscription for \(endpoint ?? "")")
        }
        guard
            let opened = candidates.lazy.compactMap({ entry in Self.open(body, with: entry).map { (entry, $0) } }).first
        else {
            throw CLIError(.badInput, "the body does not decrypt with any kept subscription")
        }
        let (entry, plaintext) = opened
        let payload: JSONValue
        do { payload = try JSONParser.parse(plaintext) } catch {
            throw CLIError(.badInput, "the decrypted body is not JSON")
        }
        let outcome = try cache(payload, for: entry)
        if global.json {
            print(payload.jsonText)
        } else {
            print(outcome)
            if let title = payload["notification"]?["title"]?.stringValue,
                let text = payload["notification"]?["body"]?.stringValue
            {
                print("\(title): \(text)")
            }
        }
    }

    /// The plaintext, or nil when the body is not for this subscription (or not a valid RFC 8291 body).
    static func open(_ body: [UInt8], with entry: WebPushBook.Entry) -> [UInt8]? {
        guard let raw = WebPushSubscription.decodeBase64URL(entry.privateKey),
            let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: raw),
            let auth = WebPushSubscription.decodeBase64URL(entry.auth)
        else { return nil }
        return try? WebPushCipher.decrypt(body, privateKey: key, authSecret: auth)
    }

    private func cache(_ payload: JSONValue, for entry: WebPushBook.Entry) throws -> String {
        let data = payload["data"]
        let type = data?["type"]?.stringValue ?? ""
        if type == "setup" { return "setup confirmation for \(entry.wallet) (not cached)" }
        let keys = Set(data?.objectMembers?.map(\.key) ?? [])
        if keys == ["type", "sid", "epoch"] {
            return "wake-up for sid \(data?["sid"]?.stringValue ?? "?") (not cached: inbox sync fetches it)"
        }
        let item: FeedItem
        do {
            item = try FeedItem.parse(push: payload)
        } catch {
            throw CLIError(.badInput, "not cached: \(error.description)")
        }
        guard let wallet = try? EthereumAddress(parsing: entry.wallet) else {
            throw CLIError(.badInput, "the kept subscription's wallet \(entry.wallet) is not an address")
        }
        let added = try InboxCommand.open(global).insert([item], wallet: wallet)
        return added == 1
            ? "cached sid \(item.sid) (type \(item.type)) for \(wallet)" : "sid \(item.sid) was already cached"
    }
}
