import Crypto
import HeraldCore
import HeraldInbox

/// One fuzz target per parser that reads bytes from outside: whatever comes in, the answer is a value
/// or a thrown error, never a crash.
///
/// A library of its own so that the same entry points serve libFuzzer (`Fuzz/`, built with
/// AddressSanitizer and coverage) and `swift test`, which replays every seed and every input that
/// once crashed (`Fuzz/Corpus`, `Fuzz/Regressions`) through them on each run.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case envelope, signature, eip712, ecies, cryptojs, keystore, push, bisq, webpush

    static let key = try? PrivateKey(hex: "0x" + String(repeating: "42", count: 32))
    static let verifier = OperationVerifier(audience: "fuzz", chainId: UInt256(1))
    /// The subscription the `webpush` seeds are encrypted for (scripts/fuzz/webpush-seeds.py makes them).
    static let webPushKey = try? P256.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0x42, count: 32))
    static let webPushAuth = [UInt8](repeating: 0x24, count: 16)

    /// Feeds one input to this target's parsers; returns when they have answered.
    public func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        switch self {
        case .envelope:
            // The whole request path of §2.3: strict JSON, envelope, fields, time, signature.
            _ = Self.verifier.verify(json: bytes, as: DeviceBinding.self, now: 1_763_769_700)
            _ = Self.verifier.verify(json: bytes, as: NotificationOperation.self, now: 1_763_769_700)
            if let text = String(validating: bytes, as: UTF8.self) {
                _ = try? RawEnvelope.parse(authorizationHeader: "Herald " + text)
                _ = try? NotificationPayload.parse(text)
            }
        case .signature:
            guard bytes.count >= 65 + 32 else { return }
            let signature = try? RecoverableSignature(bytes: bytes.prefix(65))
            _ = try? signature?.recoverAddress(digest: bytes.dropFirst(65).prefix(32))
        case .eip712:
            guard let typed = try? TypedData(json: JSONParser.parse(bytes)) else { return }
            _ = try? typed.digest()
        case .ecies:
            guard let key = Self.key else { return }
            _ = try? ECIES.decrypt(String(decoding: bytes, as: UTF8.self), with: key)
        case .cryptojs:
            _ = try? CryptoJSAES.decrypt(String(decoding: bytes, as: UTF8.self), passphrase: "abcdefghijklmno")
        case .keystore:
            // Parsing and the KDF caps only: a derivation per input would make the fuzzer crawl.
            _ = try? Keystore(json: bytes)
        case .push:
            // What a client does with a push or a synced item: parse it, and open a type 2 in memory.
            guard let json = try? JSONParser.parse(bytes), let item = try? FeedItem.parse(push: json) else { return }
            if let key = Self.key { _ = try? item.decrypted(with: key) }
        case .bisq:
            // What `herald bisq pair` and `inbox ingest --bisq-key` read (PROTOCOL §8): a pairing token, and
            // a Bisq push or bare message decrypted with a key (the vectors' first, so seeds reach the JSON).
            let text = String(decoding: bytes, as: UTF8.self)
            _ = try? BisqPairingToken(parsing: text)
            _ = try? BisqMessageCipher.decrypt(text, key: "36d40889af3f46348c4c09ff323d9608")
            if let json = try? JSONParser.parse(bytes), let message = try? BisqPush.encryptedMessage(in: json) {
                _ = try? BisqMessageCipher.decrypt(message, key: "36d40889af3f46348c4c09ff323d9608")
            }
        case .webpush:
            webPush(bytes)
        }
    }

    /// What reads Web Push bytes from outside (PROTOCOL §9): a WebPushBinding request (its subscription
    /// is validated before the signature is checked), a subscription's fields, an endpoint URL and an
    /// IP address or network as text, and a pushed body that `inbox ingest --webpush` decrypts with a
    /// kept subscription's keys (fixed here, so that seeds encrypted for them reach the JSON inside).
    private func webPush(_ bytes: UnsafeBufferPointer<UInt8>) {
        _ = Self.verifier.verify(json: bytes, as: WebPushBinding.self, now: 1_763_769_700)
        if let json = try? JSONParser.parse(bytes) {
            _ = try? WebPushBinding(message: json)
            let keys = json["keys"] ?? json
            if let endpoint = json["endpoint"]?.stringValue, let p256dh = keys["p256dh"]?.stringValue,
                let auth = keys["auth"]?.stringValue
            {
                _ = try? WebPushSubscription(endpoint: endpoint, p256dh: p256dh, auth: auth)
            }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        if let endpoint = WebPushEndpoint(text) { _ = endpoint.origin }
        _ = IPNetwork(text)
        _ = IPNetwork.parseAddress(text)
        _ = WebPushSubscription.decodeBase64URL(text)
        if let plaintext = Self.openWebPush(Array(bytes)), let json = try? JSONParser.parse(plaintext) {
            _ = try? FeedItem.parse(push: json)
        }
    }

    /// A Web Push body decrypted for the fixed subscription, or nil (public, so a test can check that
    /// the seeds reach what lies past the decryption).
    public static func openWebPush(_ body: [UInt8]) -> [UInt8]? {
        guard let key = webPushKey else { return nil }
        return try? WebPushCipher.decrypt(body, privateKey: key, authSecret: webPushAuth)
    }
}
