public import HeraldCore

/// docs/protocol.md §11.1: the keys a channel lets sign its Notifications.
public protocol DelegateStore: Sendable {
    /// Adds or removes a delegate of a channel, with the channel's nonce, in one transaction.
    func apply(_ change: DelegateChange) async throws -> DelegateOutcome

    /// A channel's delegates, sorted by their bytes (their lowercase hex); empty for an unknown channel.
    func delegates(of channel: EthereumAddress) async throws -> [EthereumAddress]
}

/// A verified Delegate operation.
public struct DelegateChange: Sendable, Hashable {
    public let channel: EthereumAddress
    public let delegate: EthereumAddress
    public let action: DelegateUpdate.Action
    public let signed: SignedChange

    public init(
        channel: EthereumAddress, delegate: EthereumAddress, action: DelegateUpdate.Action, signed: SignedChange
    ) {
        self.channel = channel
        self.delegate = delegate
        self.action = action
        self.signed = signed
    }
}

/// The answer's `status`.
public enum DelegateStatus: String, Sendable, Hashable {
    /// It is a delegate now (it may have been one already: nothing changed then).
    case added
    /// It was one and is no longer.
    case removed
    /// A removal of an address that was not a delegate.
    case absent
}

public enum DelegateOutcome: Sendable, Hashable {
    case applied(DelegateStatus)
    /// The signer is no channel (`forbidden`): nothing changed, the nonce is not spent.
    case unknownChannel
    /// An add past the channel's `DelegatePlanner.limit` delegates (`forbidden`): nothing changed.
    case tooMany
    case replayed
    /// The same operation again (docs/protocol.md §11.2): nothing changed; the first copy's outcome, answered
    /// again with `Idempotent-Replay: true`.
    indirect case repeated(DelegateOutcome)
}

/// What a Delegate operation writes, decided from what the backend read in its transaction.
package enum DelegatePlan: Sendable, Hashable {
    case insert
    case delete
    /// Nothing to write (adding a present delegate, removing an absent one); the nonce is still spent.
    case keep(DelegateStatus)
    case refuseUnknownChannel
    case refuseTooMany

    /// What the operation answers: `applied` for a plan to write (its nonce spent first), else the
    /// refusal, which spends nothing.
    package var answer: DelegateOutcome {
        switch self {
        case .insert: return .applied(.added)
        case .delete: return .applied(.removed)
        case .keep(let status): return .applied(status)
        case .refuseUnknownChannel: return .unknownChannel
        case .refuseTooMany: return .tooMany
        }
    }
}

/// Decides docs/protocol.md §11.1's rules once, for every backend.
package enum DelegatePlanner {
    /// Delegates a channel may have at once.
    package static let limit = 20

    package static func plan(
        _ change: DelegateChange, channelExists: Bool, isDelegate: Bool, delegateCount: Int
    ) -> DelegatePlan {
        guard channelExists else { return .refuseUnknownChannel }
        switch change.action {
        case .add:
            if isDelegate { return .keep(.added) }
            return delegateCount >= limit ? .refuseTooMany : .insert
        case .remove:
            return isDelegate ? .delete : .keep(.absent)
        }
    }
}
