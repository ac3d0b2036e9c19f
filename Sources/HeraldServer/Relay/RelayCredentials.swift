import Crypto
import Foundation
import HeraldCore
public import HeraldStore

/// An installation's credentials (docs/protocol.md §7): an id (a UUID) and a key (base64url, no padding, of 32
/// random bytes), of which the upstream keeps only SHA-256 of the key's text.
public enum RelayCredentials {
    /// A new installation's id and key: the key is shown once and never stored.
    public static func generate() -> (id: String, key: String) {
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        return (UUID().uuidString.lowercased(), Base64URL.encode(key))
    }

    /// SHA-256 of the key's base64url text, as stored.
    public static func hash(key: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(key.utf8)))
    }

    /// Whether `key` is the installation's, compared in constant time.
    public static func matches(key: String, of installation: RelayInstallation) -> Bool {
        let presented = hash(key: key)
        guard presented.count == installation.keyHash.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(presented, installation.keyHash) { difference |= a ^ b }
        return difference == 0
    }

    /// The form of an installation id: a lowercase UUID.
    public static func isInstallationID(_ text: String) -> Bool {
        guard text.count == 36, let uuid = UUID(uuidString: text) else { return false }
        return uuid.uuidString.lowercased() == text
    }
}
