package import HeraldCore

/// What a backend read about a device change's binding inside the write's transaction (on PostgreSQL,
/// under the signer's advisory lock), for `DeviceChangePlanner`.
package struct BindingFacts: Sendable, Hashable {
    /// The (wallet, platform, token) binding exists.
    package let exists: Bool
    /// Bindings the wallet holds, of every platform.
    package let walletBindings: Int

    package init(exists: Bool, walletBindings: Int) {
        self.exists = exists
        self.walletBindings = walletBindings
    }
}

/// What a backend writes for a device change, its nonce spent first (a refusal spends nothing).
package enum DeviceChangePlan: Sendable, Hashable {
    /// The binding exists: mark it seen now, and store the Web Push keys when given (§9).
    case refresh(webPush: WebPushSubscription?)
    /// A new binding, with its Web Push keys when given, and the setup confirmation push (§4.3) queued
    /// in the same transaction when `confirm`.
    case create(webPush: WebPushSubscription?, confirm: Bool)
    /// Over the wallet's binding limit: nothing is written, the nonce is not spent.
    case refuseOverLimit
    /// Delete the binding (the outcome says whether there was one).
    case remove

    /// The outcome when the plan itself tells it, before any write: a register's. Its answer is then kept
    /// with the nonce in the statement that spends it (docs/protocol.md §11.2), the registration's hot path.
    package var knownOutcome: DeviceChangeOutcome? {
        switch self {
        case .refresh: return .registered(created: false)
        case .create: return .registered(created: true)
        case .refuseOverLimit: return .overLimit
        case .remove: return nil
        }
    }
}

/// Decides every rule of a DeviceBinding (docs/protocol.md §4.1, §4.3, §9) once, for every backend.
package enum DeviceChangePlanner {
    package static func plan(_ change: DeviceChange, facts: BindingFacts) -> DeviceChangePlan {
        switch change.action {
        case .unregister:
            return .remove
        case .register:
            if facts.exists { return .refresh(webPush: change.webPush) }
            // A refresh never counts against the limit; only a binding that would be one too many does.
            guard facts.walletBindings < change.maxBindingsPerWallet else { return .refuseOverLimit }
            return .create(webPush: change.webPush, confirm: change.queueSetupConfirmation)
        }
    }
}
