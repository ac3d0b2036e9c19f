import Crypto
import CryptoExtras
import Foundation

/// Bisq's message encryption (docs/protocol.md §8), as its desktop's `MobileMessageEncryption` does it:
/// `<BisqMessageiOS|BisqMessageAndroid>|<iv>|<base64 of AES-256-CBC(json padded with spaces)>`.
///
/// There is no PKCS#7 padding and no MAC: the plaintext is padded with spaces to whole blocks, the key is
/// the UTF-8 bytes of the 32-character pairing key and the IV the UTF-8 bytes of 16 characters sent in
/// the clear. A wrong key shows only as a plaintext that is not a Bisq message.
public enum BisqMessageCipher {
    public static let iosMagic = "BisqMessageiOS"
    public static let androidMagic = "BisqMessageAndroid"
    static let blockSize = 16

    /// Encrypts `message` for a phone of `platform` with its pairing `key`. `iv` is for reproducible
    /// tests only; leave it out for 16 random hex characters (Bisq draws them from a UUID).
    public static func encrypt(
        _ message: BisqMessage, key: String, platform: Platform, iv: String? = nil
    ) throws(HeraldError) -> String {
        let ivText = iv ?? Hex.encode(SecureRandom.bytes(blockSize / 2))
        guard ivText.utf8.count == blockSize, !ivText.contains("|") else {
            throw BisqMessage.invalid("the IV is 16 bytes of UTF-8 without |")
        }
        let ciphertext = try encryptBlocks(padded(message.jsonValue.jsonBytes), key: key, iv: ivText)
        let magic = platform.isApple ? iosMagic : androidMagic
        return "\(magic)|\(ivText)|\(Data(ciphertext).base64EncodedString())"
    }

    /// Decrypts a Bisq message with `key`. A malformed envelope or key is `invalidBisqMessage`; a
    /// plaintext that is not a Bisq message (what a wrong key gives) is `decryptionFailed`.
    public static func decrypt(_ envelope: String, key: String) throws(HeraldError) -> BisqMessage {
        let parts = envelope.split(separator: "|", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == iosMagic || parts[0] == androidMagic else {
            throw BisqMessage.invalid("not <BisqMessageiOS|BisqMessageAndroid>|<iv>|<ciphertext>")
        }
        let ivText = String(parts[1])
        guard ivText.utf8.count == blockSize else { throw BisqMessage.invalid("the IV is not 16 bytes") }
        guard let ciphertext = Data(base64Encoded: String(parts[2])), !ciphertext.isEmpty,
            ciphertext.count % blockSize == 0
        else {
            throw BisqMessage.invalid("the ciphertext is not base64 of whole AES blocks")
        }
        let plaintext = try decryptBlocks(Array(ciphertext), key: key, iv: ivText)
        let trimmed = plaintext[..<(plaintext.lastIndex { $0 != UInt8(ascii: " ") }.map { $0 + 1 } ?? 0)]
        guard let json = try? JSONParser.parse(trimmed), let message = try? BisqMessage(json: json) else {
            throw HeraldError(.decryptionFailed, "the Bisq message does not decrypt with this key")
        }
        return message
    }

    /// Appends spaces up to a whole number of AES blocks (none when already whole), as Bisq does.
    static func padded(_ bytes: [UInt8]) -> [UInt8] {
        let remainder = bytes.count % blockSize
        return remainder == 0 ? bytes : bytes + Array(repeating: UInt8(ascii: " "), count: blockSize - remainder)
    }

    private static func aesKey(_ key: String) throws(HeraldError) -> SymmetricKey {
        guard BisqKey.isValid(key) else { throw BisqMessage.invalid("the key is not 32 printable ASCII characters") }
        return SymmetricKey(data: Array(key.utf8))
    }

    private static func encryptBlocks(_ plaintext: [UInt8], key: String, iv: String) throws(HeraldError) -> [UInt8] {
        let symmetricKey = try aesKey(key)
        do {
            let cbcIV = try AES._CBC.IV(ivBytes: Array(iv.utf8))
            return Array(try AES._CBC.encrypt(plaintext, using: symmetricKey, iv: cbcIV, noPadding: true))
        } catch {
            throw BisqMessage.invalid("AES-CBC encryption failed")
        }
    }

    private static func decryptBlocks(_ ciphertext: [UInt8], key: String, iv: String) throws(HeraldError) -> [UInt8] {
        let symmetricKey = try aesKey(key)
        do {
            let cbcIV = try AES._CBC.IV(ivBytes: Array(iv.utf8))
            return Array(try AES._CBC.decrypt(ciphertext, using: symmetricKey, iv: cbcIV, noPadding: true))
        } catch {
            throw BisqMessage.invalid("AES-CBC decryption failed")
        }
    }
}
