package import HeraldCore

extension UInt256 {
    /// 128 random bits: collisions across a wallet's operations are out of the question.
    package static func randomNonce() -> UInt256 {
        (try? UInt256(bigEndian: SecureRandom.bytes(16))) ?? UInt256(UInt64.random(in: 1...UInt64.max))
    }
}
