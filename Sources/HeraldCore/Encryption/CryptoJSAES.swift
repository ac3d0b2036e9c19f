import Crypto
import CryptoExtras
import Foundation

/// `CryptoJS.AES.encrypt(text, passphrase).toString()` and its inverse (docs/protocol.md §5.2): how type-2
/// fields are encrypted with the message's secret (itself ECIES-encrypted to each recipient).
///
/// Output: `Base64("Salted__" ‖ salt(8) ‖ AES-256-CBC-PKCS7(text))`, key and IV from OpenSSL's
/// EVP_BytesToKey with MD5 and one iteration.
public enum CryptoJSAES {
    private static let magic = Array("Salted__".utf8)

    /// Encrypts `plaintext`. `salt` is for reproducible tests only; leave it out for a random one.
    public static func encrypt(
        _ plaintext: String, passphrase: String, salt: [UInt8]? = nil
    ) throws(HeraldError) -> String {
        let saltBytes = salt ?? SecureRandom.bytes(8)
        guard saltBytes.count == 8 else { throw HeraldError(.malformedCiphertext, "a CryptoJS salt is 8 bytes") }
        let (key, iv) = deriveKeyAndIV(passphrase: Array(passphrase.utf8), salt: saltBytes)
        do {
            let ciphertext = try AES._CBC.encrypt(Array(plaintext.utf8), using: key, iv: AES._CBC.IV(ivBytes: iv))
            return Data(magic + saltBytes + Array(ciphertext)).base64EncodedString()
        } catch {
            throw HeraldError(.malformedCiphertext, "AES-CBC encryption failed")
        }
    }

    /// Decrypts CryptoJS output. Malformed base64 or framing is `malformedCiphertext`; bad padding or
    /// non-UTF-8 plaintext (what a wrong passphrase gives) is `decryptionFailed`.
    public static func decrypt(_ encoded: String, passphrase: String) throws(HeraldError) -> String {
        guard let data = Data(base64Encoded: encoded) else {
            throw HeraldError(.malformedCiphertext, "CryptoJS ciphertext is not base64")
        }
        let blob = Array(data)
        guard blob.count >= 32, blob.starts(with: magic), (blob.count - 16) % 16 == 0 else {
            throw HeraldError(.malformedCiphertext, "CryptoJS ciphertext lacks the Salted__ header or whole blocks")
        }
        let (key, iv) = deriveKeyAndIV(passphrase: Array(passphrase.utf8), salt: Array(blob[8..<16]))
        let plaintext: Data
        do {
            plaintext = try AES._CBC.decrypt(blob[16...], using: key, iv: AES._CBC.IV(ivBytes: iv))
        } catch {
            throw HeraldError(.decryptionFailed, "CryptoJS padding is invalid: wrong secret or altered data")
        }
        guard let text = String(validating: Array(plaintext), as: UTF8.self) else {
            throw HeraldError(.decryptionFailed, "CryptoJS plaintext is not UTF-8: wrong secret or altered data")
        }
        return text
    }

    /// EVP_BytesToKey(MD5, count 1): D_i = MD5(D_{i-1} ‖ passphrase ‖ salt) until 48 bytes.
    static func deriveKeyAndIV(passphrase: [UInt8], salt: [UInt8]) -> (SymmetricKey, [UInt8]) {
        var derived: [UInt8] = []
        var previous: [UInt8] = []
        while derived.count < 48 {
            previous = Array(Insecure.MD5.hash(data: previous + passphrase + salt))
            derived += previous
        }
        return (SymmetricKey(data: derived[0..<32]), Array(derived[32..<48]))
    }
}
