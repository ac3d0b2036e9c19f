import Foundation
import HeraldCore
import Synchronization

/// VAPID JWTs (RFC 8292), one per push-service origin: `exp` 12 hours ahead, reused until an hour
/// before it (docs/protocol.md §9), so that a busy origin costs one ECDSA signature per 11 hours.
public final class VAPIDTokens: Sendable {
    public static let lifetime: Int64 = 12 * 3600
    public static let renewBefore: Int64 = 3600

    let key: VAPIDKey
    let subject: String
    let clock: @Sendable () -> Int64
    private let cache = Mutex<[String: (token: String, expires: Int64)]>([:])

    /// `clock` gives Unix seconds (tests fix it); nil is the system clock.
    public init(key: VAPIDKey, subject: String, clock: (@Sendable () -> Int64)? = nil) {
        self.key = key
        self.subject = subject
        self.clock = clock ?? { Int64(Date().timeIntervalSince1970) }
    }

    /// The `Authorization` value for a request to `origin`: `vapid t=<JWT>,k=<public key>`.
    public func authorization(origin: String) throws -> String {
        "vapid t=\(try token(origin: origin)),k=\(key.publicKey)"
    }

    public func token(origin: String) throws -> String {
        let now = clock()
        if let cached = cache.withLock({ $0[origin] }), now < cached.expires - Self.renewBefore {
            return cached.token
        }
        let expires = now + Self.lifetime
        let token = try JWT.es256(
            header: .object([("typ", .string("JWT")), ("alg", .string("ES256"))]),
            claims: .object([
                ("aud", .string(origin)), ("exp", .number(String(expires))), ("sub", .string(subject)),
            ]),
            key: key.privateKey)
        cache.withLock { cache in
            // A bounded cache: a flood of distinct origins costs signatures, not memory.
            if cache.count >= 10_000 { cache.removeAll() }
            cache[origin] = (token, expires)
        }
        return token
    }
}
