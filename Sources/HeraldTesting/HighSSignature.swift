public import HeraldCore

/// The malleable twin of a signature, for tests of the EIP-2 rule.
public enum HighSSignature {
    /// (r, n − s, v ^ 1) as `0x…` hex: the same signature with a high s, valid ECDSA that recovers
    /// the same signer, and refused by EIP-2 (docs/protocol.md §2.3).
    public static func twin(of signature: RecoverableSignature) -> String {
        let s = Array(signature.compact[32...])
        var out = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for i in stride(from: 31, through: 0, by: -1) {
            let difference = Int(Secp256k1Order.n[i]) - Int(s[i]) - borrow
            out[i] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return Hex.encode(Array(signature.compact[..<32]) + out + [28 - signature.recoveryId], prefix: true)
    }
}
