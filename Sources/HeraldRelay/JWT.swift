import Crypto
import CryptoExtras
import Foundation
import HeraldCore

/// Compact JWS as APNs (ES256) and Google's OAuth token endpoint (RS256) take them.
enum JWT {
    static func signingInput(header: JSONValue, claims: JSONValue) -> String {
        Base64URL.encode(header.jsonBytes) + "." + Base64URL.encode(claims.jsonBytes)
    }

    /// ES256: ECDSA P-256 over SHA-256, the signature as raw r ‖ s (64 bytes).
    static func es256(header: JSONValue, claims: JSONValue, key: P256.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    /// RS256: RSASSA-PKCS1-v1_5 over SHA-256.
    static func rs256(header: JSONValue, claims: JSONValue, key: _RSA.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }
}

/// A push credential that cannot be used: read from a file, never logged or served back.
public struct RelayConfigurationError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
