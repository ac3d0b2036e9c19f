package import HeraldCore

/// One operation's nonce as a backend spends it (docs/protocol.md §2.3 step 4, §11.2): the (signer, nonce)
/// key, kept with the digest of the operation that spends it and its answer, so that the same operation
/// received again is answered the same and another one with that nonce is refused.
package struct NonceSpend: Sendable {
    package let digest: NonceDigest
    package let operation: OperationDigest
    /// Unix seconds until which the row is kept (`expiresAt` + skew).
    package let retainedUntil: Int64

    package init(signer: EthereumAddress, nonce: UInt256, operation: OperationDigest, retainedUntil: Int64) {
        digest = NonceDigest(signer: signer, nonce: nonce)
        self.operation = operation
        self.retainedUntil = retainedUntil
    }
}
