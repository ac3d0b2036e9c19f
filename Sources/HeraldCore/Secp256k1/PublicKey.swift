import CSecp256k1

/// A secp256k1 public key, a point on the curve.
public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
    /// 65 bytes, `04 ‖ X ‖ Y`.
    public let uncompressed: [UInt8]

    init(validated point: secp256k1_pubkey) {
        var point = point
        var out = [UInt8](repeating: 0, count: 65)
        var length = 65
        secp256k1_ec_pubkey_serialize(
            Secp256k1Context.verification, &out, &length, &point, UInt32(SECP256K1_EC_UNCOMPRESSED))
        uncompressed = out
    }

    /// Parses a compressed (33 bytes, `02`/`03`), uncompressed (65 bytes, `04`) or bare (64 bytes,
    /// `X ‖ Y`, as eth-crypto prints) key. A point not on the curve throws `invalidPublicKey`.
    public init<Bytes: Collection>(bytes: Bytes) throws(HeraldError) where Bytes.Element == UInt8 {
        var raw = Array(bytes)
        if raw.count == 64 { raw.insert(0x04, at: 0) }
        let prefixOK = (raw.count == 33 && (raw[0] == 2 || raw[0] == 3)) || (raw.count == 65 && raw[0] == 4)
        var point = secp256k1_pubkey()
        guard prefixOK, secp256k1_ec_pubkey_parse(Secp256k1Context.verification, &point, raw, raw.count) == 1 else {
            throw HeraldError(.invalidPublicKey, "not a secp256k1 public key")
        }
        self.init(validated: point)
    }

    /// Parses hex (`0x` optional) of any form `init(bytes:)` accepts.
    public init(hex: some StringProtocol) throws(HeraldError) {
        let bytes: [UInt8]
        do { bytes = try Hex.decode(hex) } catch { throw HeraldError(.invalidPublicKey, "a public key is hex") }
        try self.init(bytes: bytes)
    }

    /// 33 bytes, `02`/`03 ‖ X`.
    public var compressed: [UInt8] {
        var out = [UInt8](repeating: 0, count: 33)
        var length = 33
        var point = rawPoint
        secp256k1_ec_pubkey_serialize(
            Secp256k1Context.verification, &out, &length, &point, UInt32(SECP256K1_EC_COMPRESSED))
        return out
    }

    /// `0x04…`, the form Herald outputs.
    public var hex: String { Hex.encode(uncompressed, prefix: true) }

    /// keccak256(X ‖ Y)[12...]
    public var address: EthereumAddress { EthereumAddress(uncompressedPublicKey: uncompressed) }

    /// The point in libsecp256k1's internal form, for C calls. Parsing cannot fail: `uncompressed` came from C.
    var rawPoint: secp256k1_pubkey {
        var point = secp256k1_pubkey()
        _ = secp256k1_ec_pubkey_parse(Secp256k1Context.verification, &point, uncompressed, 65)
        return point
    }

    public var description: String { hex }
}
