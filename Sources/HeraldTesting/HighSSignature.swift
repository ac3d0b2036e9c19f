public import HeraldCore

/// The malleable twin of a signature, for tests of the EIP-2 rule.
public enum HighSSignature {
    /// secp256k1's group order n, big-endian.
    static let order: [UInt8] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
        0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
    ]

    /// (r, n − s, v ^ 1) as `0x…` hex: the same signature with a high s, valid ECDSA that recovers
    /// the same signer, and refused by EIP-2 (PROTOCOL §2.3).
    public static func twin(of signature: RecoverableSignature) -> String {
        let s = Array(signature.compact[32...])
        var out = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for i in stride(from: 31, through: 0, by: -1) {
            let difference = Int(order[i]) - Int(s[i]) - borrow
            out[i] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return Hex.encode(Array(signature.compact[..<32]) + out + [28 - signature.recoveryId], prefix: true)
    }
}
