/// The 32 bytes an operation's signature covers (its EIP-712 hash, or its EIP-191 message hash). With the
/// (signer, nonce) pair, what makes two copies of a request the same operation (docs/protocol.md §11.2):
/// the same message under the other scheme has another digest, and so is another operation.
public struct OperationDigest: Sendable, Hashable {
    public let bytes: [UInt8]

    /// Nil unless `bytes` is 32 bytes long.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    private init(random: Void) {
        var generator = SystemRandomNumberGenerator()
        bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// A digest no signature produced, for writes that are not requests (tools that seed a store, tests):
    /// every call is another operation, so only the same change value applied twice is "the same again".
    package static func random() -> OperationDigest { OperationDigest(random: ()) }
}

/// What storage kept beside a spent nonce: the digest of the operation that spent it and that operation's
/// answer (``StoredAnswer``). Both are nil for a nonce spent before answers were kept.
package struct SpentNonce: Sendable, Hashable {
    package let operation: [UInt8]?
    package let answer: [UInt8]?

    package init(operation: [UInt8]?, answer: [UInt8]?) {
        self.operation = operation
        self.answer = answer
    }
}
