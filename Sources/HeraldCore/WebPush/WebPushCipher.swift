public import Crypto
import Foundation

/// RFC 8291 message encryption for Web Push: `aes128gcm` (RFC 8188) with one record, keyed by an
/// ECDH between a fresh sender key and the subscription's `p256dh`, mixed with its `auth` secret.
/// docs/protocol.md §9; `vectors/webpush.json` is RFC 8291 Appendix A.
public enum WebPushCipher {
    /// The record size written in every header. One record of plaintext + delimiter + tag must fit.
    public static let recordSize: UInt32 = 4096
    /// salt (16) ‖ rs (4) ‖ idlen (1) ‖ keyid (65): the aes128gcm header Web Push uses.
    public static let headerLength = 86
    /// The largest plaintext one send carries: a body of at most 4096 bytes holds the header, the
    /// plaintext, its delimiter and the 16-byte tag (4096 − 86 − 1 − 16).
    public static let maximumPlaintext = 3993

    /// Why a body was refused: nothing about the keys or the content.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String

        init(_ description: String) { self.description = description }
    }

    /// Encrypts `plaintext` for a subscription. A fresh ephemeral key and salt are drawn per call
    /// unless given (the RFC's vector fixes both).
    public static func encrypt(
        _ plaintext: [UInt8], to subscriber: P256.KeyAgreement.PublicKey, authSecret: [UInt8],
        ephemeralKey: P256.KeyAgreement.PrivateKey = WebPushCipher.ephemeralKey(),
        salt: [UInt8] = WebPushCipher.randomBytes(16)
    ) throws(Failure) -> [UInt8] {
        guard plaintext.count <= maximumPlaintext else {
            throw Failure("plaintext of \(plaintext.count) bytes exceeds \(maximumPlaintext)")
        }
        guard salt.count == 16, authSecret.count == 16 else { throw Failure("salt and auth must be 16 bytes") }
        let senderPublic = Array(ephemeralKey.publicKey.x963Representation)
        let keys = try contentKeys(
            privateKey: ephemeralKey, peer: subscriber, authSecret: authSecret, salt: salt,
            subscriberPublic: Array(subscriber.x963Representation), senderPublic: senderPublic)
        // The last (and only) record ends with the delimiter 0x02 and no padding.
        var record = plaintext
        record.append(0x02)
        let sealed: AES.GCM.SealedBox
        do {
            sealed = try AES.GCM.seal(record, using: keys.key, nonce: keys.nonce)
        } catch {
            throw Failure("AES-GCM refused the record")
        }
        var body = salt
        body.reserveCapacity(headerLength + record.count + 16)
        withUnsafeBytes(of: recordSize.bigEndian) { body.append(contentsOf: $0) }
        body.append(UInt8(senderPublic.count))
        body.append(contentsOf: senderPublic)
        body.append(contentsOf: sealed.ciphertext)
        body.append(contentsOf: sealed.tag)
        return body
    }

    /// Decrypts a body sent to the subscription whose private key and auth secret are given: the
    /// subscriber's side (the CLI plays the browser). Checks what RFC 8188/8291 require: a 65-byte
    /// sender key on the curve, one record no longer than `rs`, the tag, and the last-record delimiter.
    public static func decrypt(
        _ body: [UInt8], privateKey: P256.KeyAgreement.PrivateKey, authSecret: [UInt8]
    ) throws(Failure) -> [UInt8] {
        guard body.count >= headerLength + 16 + 1 else { throw Failure("body too short for an aes128gcm header") }
        let salt = Array(body[0..<16])
        let rs = body[16..<20].reduce(UInt32(0)) { ($0 << 8) | UInt32($1) }
        guard rs >= 18 else { throw Failure("record size below 18") }
        guard body[20] == 65 else { throw Failure("key id is not a 65-byte P-256 key") }
        let senderPublic = Array(body[21..<86])
        let sender: P256.KeyAgreement.PublicKey
        do {
            sender = try P256.KeyAgreement.PublicKey(x963Representation: senderPublic)
        } catch {
            throw Failure("sender key is not a point on P-256")
        }
        let record = body[headerLength...]
        guard record.count <= Int(rs) else { throw Failure("more than one record") }
        let keys = try contentKeys(
            privateKey: privateKey, peer: sender, authSecret: authSecret, salt: salt,
            subscriberPublic: Array(privateKey.publicKey.x963Representation), senderPublic: senderPublic)
        let opened: Data
        do {
            let box = try AES.GCM.SealedBox(
                nonce: keys.nonce, ciphertext: record.dropLast(16), tag: record.suffix(16))
            opened = try AES.GCM.open(box, using: keys.key)
        } catch {
            throw Failure("the body does not decrypt with this subscription's keys")
        }
        // Padding is zeros after the delimiter; the delimiter of the last record is 0x02.
        guard let end = opened.lastIndex(where: { $0 != 0 }), opened[end] == 0x02 else {
            throw Failure("the record lacks the last-record delimiter")
        }
        return Array(opened[opened.startIndex..<end])
    }

    struct ContentKeys {
        let key: SymmetricKey
        let nonce: AES.GCM.Nonce
    }

    /// RFC 8291 §3.4 then RFC 8188 §2.2: IKM from the ECDH secret and `auth`, then CEK and nonce
    /// from the salt. Both sides run this with their own private key and the other's public key.
    static func contentKeys(
        privateKey: P256.KeyAgreement.PrivateKey, peer: P256.KeyAgreement.PublicKey, authSecret: [UInt8],
        salt: [UInt8], subscriberPublic: [UInt8], senderPublic: [UInt8]
    ) throws(Failure) -> ContentKeys {
        let shared: SharedSecret
        do {
            shared = try privateKey.sharedSecretFromKeyAgreement(with: peer)
        } catch {
            throw Failure("ECDH failed")
        }
        let keyInfo = Array("WebPush: info".utf8) + [0] + subscriberPublic + senderPublic
        let ikm = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: authSecret, sharedInfo: keyInfo, outputByteCount: 32)
        let cek = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm".utf8) + [0],
            outputByteCount: 16)
        let nonceBytes = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: nonce".utf8) + [0],
            outputByteCount: 12)
        do {
            let nonce = try nonceBytes.withUnsafeBytes { try AES.GCM.Nonce(data: Array($0)) }
            return ContentKeys(key: cek, nonce: nonce)
        } catch {
            throw Failure("nonce derivation failed")
        }
    }

    /// A fresh P-256 key for one send: a scalar drawn uniformly from [1, n − 1] by rejection, its point
    /// computed once. swift-crypto's `PrivateKey()` also runs FIPS's pairwise test (an ECDSA signature
    /// and its verification), which doubled the cost of every encryption for a key used once.
    public static func ephemeralKey() -> P256.KeyAgreement.PrivateKey {
        for _ in 0..<8 {
            // Out of range (zero, or at least n) with probability about 2^-32: draw again.
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: randomBytes(32)) { return key }
        }
        return P256.KeyAgreement.PrivateKey()
    }

    /// `count` bytes from the system CSPRNG, eight at a time (one call per word, not per byte).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0) }
        }
        return Array(bytes.prefix(count))
    }
}
