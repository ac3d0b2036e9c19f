import CSecp256k1

/// An Ethereum signature: `r ‖ s ‖ v`, 65 bytes, from which the signer's public key can be recovered.
///
/// Parsing enforces what docs/protocol.md §2 demands: `v` ∈ {27, 28, 0, 1}, `r` and `s` in [1, n − 1], and
/// `s` ≤ n/2 (EIP-2 low-s), so that a signature has exactly one accepted encoding.
public struct RecoverableSignature: Sendable, Hashable {
    /// `r ‖ s`, 64 bytes.
    public let compact: [UInt8]
    /// 0 or 1.
    public let recoveryId: UInt8

    init(validatedCompact: [UInt8], recoveryId: UInt8) {
        self.compact = validatedCompact
        self.recoveryId = recoveryId
    }

    /// Parses 65 bytes `r ‖ s ‖ v`. Anything outside the rules above throws `invalidSignature`.
    public init<Bytes: Collection>(bytes: Bytes) throws(HeraldError) where Bytes.Element == UInt8 {
        let raw = Array(bytes)
        guard raw.count == 65 else { throw HeraldError(.invalidSignature, "a signature is 65 bytes") }
        let v = raw[64]
        guard v == 27 || v == 28 || v == 0 || v == 1 else {
            throw HeraldError(.invalidSignature, "signature v must be 27, 28, 0 or 1")
        }
        let r = raw[0..<32]
        let s = raw[32..<64]
        guard Secp256k1Order.isValidScalar(r), Secp256k1Order.isValidScalar(s) else {
            throw HeraldError(.invalidSignature, "signature r and s must lie in [1, n-1]")
        }
        guard Secp256k1Order.isLowS(s) else {
            throw HeraldError(.invalidSignature, "signature s must be at most n/2 (EIP-2)")
        }
        compact = Array(raw[0..<64])
        recoveryId = v >= 27 ? v - 27 : v
    }

    /// Parses hex (`0x` optional) of 65 bytes.
    public init(hex: some StringProtocol) throws(HeraldError) {
        let bytes: [UInt8]
        do { bytes = try Hex.decode(hex) } catch {
            throw HeraldError(.invalidSignature, "a signature is 130 hex digits")
        }
        try self.init(bytes: bytes)
    }

    /// `r ‖ s ‖ v` with `v` = 27 or 28, as eth-account and wallets produce.
    public var bytes: [UInt8] { compact + [recoveryId + 27] }

    /// `0x…`, 130 hex digits.
    public var hex: String { Hex.encode(bytes, prefix: true) }

    /// The public key that produced this signature over `digest` (32 bytes).
    /// Throws `recoveryFailed` when no point recovers, as a crafted signature can arrange.
    public func recoverPublicKey(digest: some Collection<UInt8>) throws(HeraldError) -> PublicKey {
        let message = Array(digest)
        guard message.count == 32 else { throw HeraldError(.recoveryFailed, "a digest is 32 bytes") }
        let context = Secp256k1Context.verification
        var signature = secp256k1_ecdsa_recoverable_signature()
        var point = secp256k1_pubkey()
        guard secp256k1_ecdsa_recoverable_signature_parse_compact(context, &signature, compact, Int32(recoveryId)) == 1,
            secp256k1_ecdsa_recover(context, &point, &signature, message) == 1
        else {
            throw HeraldError(.recoveryFailed, "no public key recovers from this signature")
        }
        return PublicKey(validated: point)
    }

    /// The address of the signer of `digest`.
    public func recoverAddress(digest: some Collection<UInt8>) throws(HeraldError) -> EthereumAddress {
        try recoverPublicKey(digest: digest).address
    }
}
