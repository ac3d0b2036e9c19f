package import HeraldCore

/// 128 bits identifying a (signer, nonce) pair: keccak256(signer ‖ nonce as 32 bytes)[0..<16].
/// Two pairs colliding is a 2^-128 event; a birthday collision among even 10^9 live nonces, 2^-68.
package struct NonceDigest: Hashable, Sendable {
    package let high: UInt64
    package let low: UInt64

    package init(signer: EthereumAddress, nonce: UInt256) {
        let hash = Keccak256.hash(signer.bytes + nonce.bigEndianBytes)
        high = hash[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = hash[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    package init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    package var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
    }
}
