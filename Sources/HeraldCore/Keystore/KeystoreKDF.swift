import Crypto
import CryptoExtras

/// The key derivation of a v3 keystore, with the read caps of docs/protocol.md §5.3 checked before any work.
public enum KeystoreKDF: Sendable, Hashable {
    case scrypt(n: Int, r: Int, p: Int, dklen: Int, salt: [UInt8])
    case pbkdf2(c: Int, dklen: Int, salt: [UInt8])

    /// Geth's and Herald's default: n = 2^18, r = 8, p = 1 (about 0.7 s and 256 MiB here).
    public static func standardScrypt(salt: [UInt8] = SecureRandom.bytes(32)) -> KeystoreKDF {
        .scrypt(n: 262_144, r: 8, p: 1, dklen: 32, salt: salt)
    }

    /// Geth's light setting: n = 4096, p = 6.
    public static func lightScrypt(salt: [UInt8] = SecureRandom.bytes(32)) -> KeystoreKDF {
        .scrypt(n: 4096, r: 8, p: 6, dklen: 32, salt: salt)
    }

    enum Caps {
        static let scryptN = 1 << 20
        static let scryptR = 32
        static let scryptP = 16
        static let scryptMemory = 1 << 30
        static let pbkdf2Iterations = 10_000_000
        static let dklen = 32...64
        static let saltBytes = 1...1024
    }

    /// Refuses parameters that are malformed (`malformedKeystore`) or that would cost more than the caps
    /// allow (`kdfParametersTooLarge`): a hostile file must not make us spend a minute or a gigabyte.
    func checkParameters() throws(HeraldError) {
        switch self {
        case let .scrypt(n, r, p, dklen, salt):
            guard n >= 2, n & (n - 1) == 0, r >= 1, p >= 1 else {
                throw HeraldError(.malformedKeystore, "scrypt n must be a power of two ≥ 2, r and p ≥ 1")
            }
            guard n <= Caps.scryptN, r <= Caps.scryptR, p <= Caps.scryptP,
                n.multipliedReportingOverflow(by: r * p * 128).overflow == false,
                n * r * p * 128 <= Caps.scryptMemory
            else {
                throw HeraldError(
                    .kdfParametersTooLarge, "scrypt parameters exceed n ≤ 2^20, r ≤ 32, p ≤ 16, n·r·p·128 ≤ 1 GiB")
            }
            try Self.checkCommon(dklen: dklen, salt: salt)
        case let .pbkdf2(c, dklen, salt):
            guard c >= 1 else { throw HeraldError(.malformedKeystore, "pbkdf2 c must be ≥ 1") }
            guard c <= Caps.pbkdf2Iterations else {
                throw HeraldError(.kdfParametersTooLarge, "pbkdf2 c exceeds 10^7")
            }
            try Self.checkCommon(dklen: dklen, salt: salt)
        }
    }

    private static func checkCommon(dklen: Int, salt: [UInt8]) throws(HeraldError) {
        guard Caps.dklen.contains(dklen) else { throw HeraldError(.malformedKeystore, "dklen must be 32…64") }
        guard Caps.saltBytes.contains(salt.count) else {
            throw HeraldError(.malformedKeystore, "salt must be 1…1024 bytes")
        }
    }

    /// Derives the key. Callers check parameters first.
    func derive(passphrase: [UInt8]) throws(HeraldError) -> [UInt8] {
        do {
            switch self {
            case let .scrypt(n, r, p, dklen, salt):
                let key = try KDF.Scrypt.deriveKey(
                    from: passphrase, salt: salt, outputByteCount: dklen, rounds: n, blockSize: r, parallelism: p)
                return key.withUnsafeBytes { Array($0) }
            case let .pbkdf2(c, dklen, salt):
                let key = try KDF.Insecure.PBKDF2.deriveKey(
                    from: passphrase, salt: salt, using: .sha256, outputByteCount: dklen, unsafeUncheckedRounds: c)
                return key.withUnsafeBytes { Array($0) }
            }
        } catch {
            throw HeraldError(.malformedKeystore, "key derivation failed")
        }
    }

    /// `kdf` and `kdfparams` as they appear in the file.
    var json: (name: String, params: JSONValue) {
        switch self {
        case let .scrypt(n, r, p, dklen, salt):
            return (
                "scrypt",
                .object([
                    ("dklen", .number("\(dklen)")), ("n", .number("\(n)")), ("p", .number("\(p)")),
                    ("r", .number("\(r)")), ("salt", .string(Hex.encode(salt))),
                ])
            )
        case let .pbkdf2(c, dklen, salt):
            return (
                "pbkdf2",
                .object([
                    ("c", .number("\(c)")), ("dklen", .number("\(dklen)")), ("prf", .string("hmac-sha256")),
                    ("salt", .string(Hex.encode(salt))),
                ])
            )
        }
    }
}
