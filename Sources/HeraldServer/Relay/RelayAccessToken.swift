import Crypto
import Foundation
import HeraldCore

/// The upstream's access tokens (docs/protocol.md §7): HS256 JWTs, `sub` the installation id, `scope`
/// `api.push`, `exp`, signed with a secret every node of the upstream shares (kept in its database),
/// so that any node checks a token without a database lookup.
public struct RelayAccessToken: Sendable {
    public static let scope = "api.push"
    public static let lifetime: Int64 = 3600

    let key: SymmetricKey

    public init(secret: [UInt8]) { key = SymmetricKey(data: secret) }

    /// A token for `installation`, valid for an hour from `now`.
    public func issue(installation: String, now: Int64) -> String {
        let header: JSONValue = .object([("alg", .string("HS256")), ("typ", .string("JWT"))])
        let claims: JSONValue = .object([
            ("sub", .string(installation)), ("scope", .string(Self.scope)), ("iat", .number(String(now))),
            ("exp", .number(String(now + Self.lifetime))),
        ])
        let input = Base64URL.encode(header.jsonBytes) + "." + Base64URL.encode(claims.jsonBytes)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: key)
        return input + "." + Base64URL.encode(Array(mac))
    }

    /// The installation a token was issued to, when it is this upstream's, unexpired and for
    /// `api.push`; nil for anything else (the caller answers 401 without saying why).
    public func verify(_ token: String, now: Int64) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, token.utf8.count <= 4096,
            let mac = Base64URL.decode(String(parts[2])),
            HMAC<SHA256>.isValidAuthenticationCode(
                mac, authenticating: Array("\(parts[0]).\(parts[1])".utf8), using: key),
            let headerBytes = Base64URL.decode(String(parts[0])),
            let header = try? JSONParser.parse(headerBytes), header["alg"] == .string("HS256"),
            let claimBytes = Base64URL.decode(String(parts[1])),
            let claims = try? JSONParser.parse(claimBytes),
            case .string(let subject)? = claims["sub"], RelayCredentials.isInstallationID(subject),
            claims["scope"] == .string(Self.scope),
            case .number(let expiry)? = claims["exp"], let expiresAt = Int64(expiry), now < expiresAt
        else { return nil }
        return subject
    }
}
