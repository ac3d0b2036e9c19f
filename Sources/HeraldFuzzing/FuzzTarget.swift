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
    case webPushSubscription = "webpush-subscription"
    case webPushIngest = "webpush-ingest"

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
            // What `herald bisq pair` and `inbox ingest --bisq-key` read (docs/protocol.md §8): a pairing token, and
            // a Bisq push or bare message decrypted with a key (the vectors' first, so seeds reach the JSON).
            let text = String(decoding: bytes, as: UTF8.self)
            _ = try? BisqPairingToken(parsing: text)
            _ = try? BisqMessageCipher.decrypt(text, key: "36d40889af3f46348c4c09ff323d9608")
            if let json = try? JSONParser.parse(bytes), let message = try? BisqPush.encryptedMessage(in: json) {
                _ = try? BisqMessageCipher.decrypt(message, key: "36d40889af3f46348c4c09ff323d9608")
            }
        case .webpush:
            webPush(bytes)
        case .webPushSubscription:
            webPushSubscription(bytes)
        case .webPushIngest:
            webPushIngest(bytes)
        }
    }

    /// The networks the subscription target checks against: none allowed, and some of each kind, so
    /// that every branch of §9's rule (an allowed IPv4 network admitting embedded forms, an allowed
    /// IPv6 network admitting what it contains) is reached.
    static let webPushPolicies = [
        WebPushNetworkPolicy(),
        WebPushNetworkPolicy(
            allowed: ["127.0.0.0/8", "192.168.1.0/24", "64:ff9b::/96", "fec0::/10", "::1/128"].compactMap(
                IPNetwork.init)),
    ]
    /// Valid keys, for inputs that bring an endpoint alone (so that its validation is not all there is).
    static let webPushPublicKey = webPushKey.map { Base64URL.encode(Array($0.publicKey.x963Representation)) } ?? ""

    /// docs/protocol.md §9's subscription validation, as `POST /v1/webpush` runs it before any signature: the
    /// three fields from a subscription's JSON, or as three lines (endpoint, p256dh, auth), or an endpoint
    /// line alone with valid keys; then the network policy on the input's first 4 and 16 bytes as an
    /// address, which is how resolved addresses reach it at send time.
    private func webPushSubscription(_ bytes: UnsafeBufferPointer<UInt8>) {
        var fields: (endpoint: String, p256dh: String, auth: String)?
        if let json = try? JSONParser.parse(bytes) {
            let keys = json["keys"] ?? json
            if let endpoint = json["endpoint"]?.stringValue, let p256dh = keys["p256dh"]?.stringValue,
                let auth = keys["auth"]?.stringValue
            {
                fields = (endpoint, p256dh, auth)
            }
        } else {
            let lines = String(decoding: bytes, as: UTF8.self).split(
                separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
            if lines.count == 3 {
                fields = (String(lines[0]), String(lines[1]), String(lines[2]))
            } else if let endpoint = lines.first {
                fields = (String(endpoint), Self.webPushPublicKey, Base64URL.encode(Self.webPushAuth))
            }
        }
        if let fields {
            _ = try? WebPushSubscription(
                endpoint: fields.endpoint, p256dh: fields.p256dh, auth: fields.auth, policy: nil)
            for policy in Self.webPushPolicies {
                _ = try? WebPushSubscription(
                    endpoint: fields.endpoint, p256dh: fields.p256dh, auth: fields.auth, policy: policy)
            }
        }
        for length in [4, 16] where bytes.count >= length {
            let address = Array(bytes.prefix(length))
            for policy in Self.webPushPolicies { _ = policy.refusal(of: address) }
        }
    }

    /// What `herald inbox ingest --webpush` reads: a pushed body, decrypted with the fixed subscription's
    /// keys (the seeds' bodies are encrypted for it) or with keys the input brings as two base64url
    /// lines (private key, auth) before the body; the plaintext as JSON; and what the command looks at
    /// in it (a setup confirmation, a wake-up `{type, sid, epoch}`, or an item to cache). The input is
    /// also taken as a plaintext, since the fuzzer cannot forge the AEAD tag of a body of its own.
    private func webPushIngest(_ bytes: UnsafeBufferPointer<UInt8>) {
        let input = Array(bytes)
        var plaintexts = [input]
        if let opened = Self.openWebPush(input) { plaintexts.append(opened) }
        let parts = input.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
        if parts.count == 3,
            let raw = WebPushSubscription.decodeBase64URL(String(decoding: parts[0], as: UTF8.self)),
            let auth = WebPushSubscription.decodeBase64URL(String(decoding: parts[1], as: UTF8.self)),
            let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: raw),
            let opened = try? WebPushCipher.decrypt(Array(parts[2]), privateKey: key, authSecret: auth)
        {
            plaintexts.append(opened)
        }
        for plaintext in plaintexts {
            guard let payload = try? JSONParser.parse(plaintext) else { continue }
            let data = payload["data"]
            _ = data?["type"]?.stringValue
            _ = Set(data?.objectMembers?.map(\.key) ?? [])
            _ = payload["notification"]?["title"]?.stringValue
            _ = try? FeedItem.parse(push: payload)
        }
    }

    /// What reads Web Push bytes from outside (docs/protocol.md §9): a WebPushBinding request (its subscription
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
