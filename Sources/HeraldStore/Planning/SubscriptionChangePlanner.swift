/// What a backend writes for a subscription change, its nonce spent first (a refusal spends nothing).
package enum SubscriptionChangePlan: Sendable, Hashable {
    case subscribe
    case unsubscribe
    /// No such channel: nothing is written, the nonce is not spent.
    case refuseUnknownChannel
}

/// Decides the rules of a Subscription (docs/protocol.md §4.1) once, for every backend.
package enum SubscriptionChangePlanner {
    package static func plan(_ change: SubscriptionChange, channelExists: Bool) -> SubscriptionChangePlan {
        guard channelExists else { return .refuseUnknownChannel }
        switch change.action {
        case .subscribe: return .subscribe
        case .unsubscribe: return .unsubscribe
        }
    }
}
