import CSecp256k1

/// A secp256k1 private key: 32 bytes, validated to lie in [1, n − 1].
///
/// The bytes are kept in a buffer that is zeroed when the last copy of the key goes away.
/// `description` never shows them.
public struct PrivateKey: Sendable, CustomStringConvertible {
    private let storage: SecretBytes

    /// Wraps 32 raw bytes; anything else, zero or ≥ n throws `invalidPrivateKey`.
    public init<Bytes: Collection>(bytes: Bytes) throws(HeraldError) where Bytes.Element == UInt8 {
        let raw = Array(bytes)
        guard raw.count == 32, secp256k1_ec_seckey_verify(Secp256k1Context.verification, raw) == 1 else {
            throw HeraldError(.invalidPrivateKey, "a private key is 32 bytes in [1, n-1]")
        }
        storage = SecretBytes(raw)
    }

    /// Parses 64 hex digits, with or without `0x`.
    public init(hex: some StringProtocol) throws(HeraldError) {
        let bytes: [UInt8]
        do { bytes = try Hex.decode(hex) } catch {
            throw HeraldError(.invalidPrivateKey, "a private key is 64 hex digits")
        }
        try self.init(bytes: bytes)
    }

    /// A new key from the system CSPRNG.
    public static func generate() -> PrivateKey {
        var rng = SystemRandomNumberGenerator()
        while true {
            let candidate = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
            // The chance of landing outside [1, n-1] is about 2^-128; loop rather than reason about it.
            if let key = try? PrivateKey(bytes: candidate) { return key }
        }
    }

    /// The raw 32 bytes. Handle with care: this is the secret.
    public var rawBytes: [UInt8] { storage.bytes }

    /// The matching public key.
    public var publicKey: PublicKey {
        var pubkey = secp256k1_pubkey()
        // Cannot fail: the scalar was validated at construction.
        _ = storage.bytes.withUnsafeBufferPointer {
            secp256k1_ec_pubkey_create(Secp256k1Context.shared.pointer, &pubkey, $0.baseAddress!)
        }
        return PublicKey(validated: pubkey)
    }

    /// The Ethereum address of this key.
    public var address: EthereumAddress { publicKey.address }

    /// RFC 6979 deterministic, recoverable ECDSA over a 32-byte digest. The signature is low-s.
    public func sign(digest: some Collection<UInt8>) throws(HeraldError) -> RecoverableSignature {
        let message = Array(digest)
        guard message.count == 32 else { throw HeraldError(.invalidSignature, "a digest to sign is 32 bytes") }
        var signature = secp256k1_ecdsa_recoverable_signature()
        let ok = storage.bytes.withUnsafeBufferPointer { key in
            secp256k1_ecdsa_sign_recoverable(
                Secp256k1Context.shared.pointer, &signature, message, key.baseAddress!, nil, nil)
        }
        guard ok == 1 else { throw HeraldError(.invalidSignature, "signing failed") }
        var compact = [UInt8](repeating: 0, count: 64)
        var recoveryId: Int32 = 0
        secp256k1_ecdsa_recoverable_signature_serialize_compact(
            Secp256k1Context.verification, &compact, &recoveryId, &signature)
        return RecoverableSignature(validatedCompact: compact, recoveryId: UInt8(recoveryId))
    }

    /// The X coordinate (32 bytes, left-padded) of this key times `publicKey`: raw ECDH, as ECIES needs.
    public func sharedSecretX(with publicKey: PublicKey) throws(HeraldError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var point = publicKey.rawPoint
        let ok = storage.bytes.withUnsafeBufferPointer { key in
            secp256k1_ecdh(
                Secp256k1Context.shared.pointer, &output, &point, key.baseAddress!,
                { out, x, _, _ in
                    guard let out, let x else { return 0 }
                    out.update(from: x, count: 32)
                    return 1
                }, nil)
        }
        guard ok == 1 else { throw HeraldError(.invalidPublicKey, "ECDH failed") }
        return output
    }

    public var description: String { "PrivateKey(address: \(address))" }
}

/// Secret bytes in a class so they can be wiped on deinit.
final class SecretBytes: @unchecked Sendable {
    private(set) var bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    deinit {
        bytes.withUnsafeMutableBufferPointer { buffer in
            for index in buffer.indices { buffer[index] = 0 }
        }
    }
}
