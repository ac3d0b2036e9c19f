/// An outcome that can say "another operation spent this nonce" (`409 replayed`) and "the same operation
/// again, answered as the first time" (docs/protocol.md §11.2).
package protocol ReplayableOutcome: Sendable {
    static var replayed: Self { get }
    static func repeated(_ first: Self) -> Self
}

extension DeviceChangeOutcome: ReplayableOutcome {}
extension SubscriptionChangeOutcome: ReplayableOutcome {}
extension NotificationOutcome: ReplayableOutcome {}
extension SubscriberControlOutcome: ReplayableOutcome {}

/// Decides §11.2 once, for every backend: a backend that found the nonce spent reads what it kept beside
/// it and asks here what the request answers.
package enum IdempotencyPlanner {
    /// `spent` is nil when the nonce's row is gone (pruned once no copy of its operation could still be
    /// valid, so nothing can ask again); a row kept before answers were stored has neither digest nor
    /// answer. Both answer `replayed`, as every spent nonce did before §11.2, and so does another
    /// operation (another digest: other fields, or the same message under the other scheme).
    package static func answer<Outcome: ReplayableOutcome>(
        _ spent: SpentNonce?, for operation: OperationDigest, decode: ([UInt8]) throws -> Outcome
    ) throws -> Outcome {
        guard let spent, spent.operation == operation.bytes, let answer = spent.answer else { return .replayed }
        return .repeated(try decode(answer))
    }
}
