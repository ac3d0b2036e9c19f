public import Crypto
public import Foundation
import HeraldCore

/// The APNs provider token (docs/protocol.md §4.3): an ES256 JWT from the team's `.p8` key, header `alg`,
/// `kid`, claims `iss` (team id) and `iat`. One token is shared by every connection; it is refreshed
/// after 50 minutes and never more often than every 20 (Apple answers `TooManyProviderTokenUpdates`
/// otherwise). The clock is injected so that tests move time instead of sleeping.
public actor APNsTokenAuthority {
    public static let refreshAfter: Int64 = 50 * 60
    public static let minimumAge: Int64 = 20 * 60

    private let key: P256.Signing.PrivateKey
    public nonisolated let keyID: String
    public nonisolated let teamID: String
    private let clock: @Sendable () -> Int64
    private var current: (token: String, issuedAt: Int64)?
    /// Tokens made so far (for tests and metrics).
    public private(set) var minted = 0

    public init(key: P256.Signing.PrivateKey, keyID: String, teamID: String, clock: @escaping @Sendable () -> Int64) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        self.clock = clock
    }

    /// Reads a `.p8` file (PKCS#8 PEM, as Apple hands it out).
    public init(
        keyFile: String, keyID: String, teamID: String,
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) throws {
        guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
            throw RelayConfigurationError("cannot read the APNs key file \(keyFile)")
        }
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(pemRepresentation: pem) } catch {
            throw RelayConfigurationError("\(keyFile) is not a .p8 P-256 private key (PKCS#8 PEM)")
        }
        self.init(key: key, keyID: keyID, teamID: teamID, clock: clock)
    }

    /// The current token, made anew when it is 50 minutes old.
    public func token() throws -> String {
        if let current, clock() - current.issuedAt < Self.refreshAfter { return current.token }
        return try mint()
    }

    /// After APNs answered `403 ExpiredProviderToken` to `rejected`: a new token if that one is at least
    /// 20 minutes old, else the same one (a refresh sooner would be refused too).
    public func renew(rejected: String) throws -> String {
        guard let current, current.token == rejected else { return try token() }
        if clock() - current.issuedAt >= Self.minimumAge { return try mint() }
        return current.token
    }

    private func mint() throws -> String {
        let now = clock()
        let token = try JWT.es256(
            header: .object([("alg", .string("ES256")), ("kid", .string(keyID))]),
            claims: .object([("iss", .string(teamID)), ("iat", .number(String(now)))]), key: key)
        current = (token, now)
        minted += 1
        return token
    }
}
