import Crypto
import CryptoExtras
import Foundation

/// ECIES as eth-crypto and eccrypto do it (docs/protocol.md §5.1): how a type-2 message's secret reaches its
/// recipient and nobody else.
///
/// Wire form, lowercase hex without `0x`: `iv(16) ‖ ephemeralPublicKey compressed(33) ‖ mac(32) ‖ ciphertext`.
public enum ECIES {
    static let headerLength = 16 + 33 + 32

    /// Encrypts `plaintext` to `recipient`. `ephemeralKey` and `iv` are for reproducible tests only;
    /// leave them out and fresh random ones are drawn.
    public static func encrypt(
        _ plaintext: some Collection<UInt8>, to recipient: PublicKey, ephemeralKey: PrivateKey? = nil,
        iv: [UInt8]? = nil
    ) throws(HeraldError) -> String {
        let ephemeral = ephemeralKey ?? PrivateKey.generate()
        let ivBytes = iv ?? SecureRandom.bytes(16)
        guard ivBytes.count == 16 else { throw HeraldError(.malformedCiphertext, "an IV is 16 bytes") }
        let keys = try SharedKeys(sharedX: ephemeral.sharedSecretX(with: recipient), stripLeadingZeros: false)
        let ciphertext: [UInt8]
        do {
            ciphertext = Array(
                try AES._CBC.encrypt(Array(plaintext), using: keys.encryption, iv: AES._CBC.IV(ivBytes: ivBytes)))
        } catch {
            throw HeraldError(.malformedCiphertext, "AES-CBC encryption failed")
        }
        let ephemeralPublic = ephemeral.publicKey
        let mac = keys.mac(iv: ivBytes, ephemeralPublicKey: ephemeralPublic.uncompressed, ciphertext: ciphertext)
        return Hex.encode(ivBytes + ephemeralPublic.compressed + mac + ciphertext)
    }

    /// Encrypts UTF-8 text.
    public static func encrypt(text: String, to recipient: PublicKey) throws(HeraldError) -> String {
        try encrypt(Array(text.utf8), to: recipient)
    }

    /// Decrypts the hex wire form with `key`. A MAC that fails with the padded X coordinate is tried once
    /// more with leading zero bytes stripped (JavaScript peers that do not pad), then `decryptionFailed`.
    /// Malformed input (bad hex, too short, bad point, ragged blocks) is `malformedCiphertext`.
    public static func decrypt(_ hex: String, with key: PrivateKey) throws(HeraldError) -> [UInt8] {
        let blob: [UInt8]
        do { blob = try Hex.decode(hex) } catch {
            throw HeraldError(.malformedCiphertext, "ECIES ciphertext is not hex")
        }
        guard blob.count >= headerLength + 16, (blob.count - headerLength) % 16 == 0 else {
            throw HeraldError(.malformedCiphertext, "ECIES ciphertext is too short or not whole AES blocks")
        }
        let iv = Array(blob[0..<16])
        let ephemeralPublic: PublicKey
        do { ephemeralPublic = try PublicKey(bytes: blob[16..<49]) } catch {
            throw HeraldError(.malformedCiphertext, "ECIES ephemeral public key is not a curve point")
        }
        guard blob[16] == 2 || blob[16] == 3 else {
            throw HeraldError(.malformedCiphertext, "ECIES ephemeral public key must be compressed")
        }
        let mac = blob[49..<81]
        let ciphertext = Array(blob[81...])
        let sharedX = try key.sharedSecretX(with: ephemeralPublic)

        var attempts = [false]
        if sharedX.first == 0 { attempts.append(true) }
        for strip in attempts {
            let keys = try SharedKeys(sharedX: sharedX, stripLeadingZeros: strip)
            let expected = keys.mac(iv: iv, ephemeralPublicKey: ephemeralPublic.uncompressed, ciphertext: ciphertext)
            guard constantTimeEquals(expected, mac) else { continue }
            do {
                return Array(try AES._CBC.decrypt(ciphertext, using: keys.encryption, iv: AES._CBC.IV(ivBytes: iv)))
            } catch {
                throw HeraldError(.decryptionFailed, "ECIES padding is invalid")
            }
        }
        throw HeraldError(.decryptionFailed, "ECIES MAC mismatch: not encrypted to this key, or altered")
    }

    /// Decrypts to UTF-8 text.
    public static func decryptText(_ hex: String, with key: PrivateKey) throws(HeraldError) -> String {
        let bytes = try decrypt(hex, with: key)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw HeraldError(.decryptionFailed, "ECIES plaintext is not UTF-8")
        }
        return text
    }

    /// SHA-512 of the shared X coordinate, split into the AES and HMAC keys.
    private struct SharedKeys {
        let encryption: SymmetricKey
        let macKey: SymmetricKey

        init(sharedX: [UInt8], stripLeadingZeros: Bool) throws(HeraldError) {
            let material = stripLeadingZeros ? Array(sharedX.drop { $0 == 0 }) : sharedX
            let hash = Array(SHA512.hash(data: material))
            encryption = SymmetricKey(data: hash[0..<32])
            macKey = SymmetricKey(data: hash[32..<64])
        }

        func mac(iv: [UInt8], ephemeralPublicKey: [UInt8], ciphertext: [UInt8]) -> [UInt8] {
            var hmac = HMAC<SHA256>(key: macKey)
            hmac.update(data: iv)
            hmac.update(data: ephemeralPublicKey)
            hmac.update(data: ciphertext)
            return Array(hmac.finalize())
        }
    }
}
