public import Crypto
import Foundation
import HeraldCore

/// The server's VAPID key (RFC 8292): a P-256 private key in PEM, read from `webpush.vapidKeyFile`.
/// Its public point, base64url, is the `applicationServerKey` browsers subscribe with and the `k` of
/// every request. The private key is never logged or served.
public struct VAPIDKey: Sendable {
    public let privateKey: P256.Signing.PrivateKey

    /// base64url (unpadded) of the 65-byte uncompressed public point: 87 characters. Encoded once:
    /// every request carries it.
    public let publicKey: String

    public init(privateKey: P256.Signing.PrivateKey) {
        self.privateKey = privateKey
        publicKey = Base64URL.encode(Array(privateKey.publicKey.x963Representation))
    }

    /// Reads a PEM P-256 private key (SEC1 `EC PRIVATE KEY` or PKCS#8 `PRIVATE KEY`).
    public init(file: String) throws(RelayConfigurationError) {
        let text: String
        do { text = try String(contentsOfFile: file, encoding: .utf8) } catch {
            throw RelayConfigurationError("cannot read the VAPID key file \(file)")
        }
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(pemRepresentation: text) } catch {
            throw RelayConfigurationError("the VAPID key file \(file) is not a PEM P-256 private key")
        }
        self.init(privateKey: key)
    }

    /// A fresh key as PEM (PKCS#8), for `herald webpush keygen`.
    public static func generate() -> (pem: String, key: VAPIDKey) {
        let key = P256.Signing.PrivateKey()
        return (key.pemRepresentation, VAPIDKey(privateKey: key))
    }
}
