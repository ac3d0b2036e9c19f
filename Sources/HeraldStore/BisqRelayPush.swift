public import HeraldCore

/// What a Bisq relay push carries (docs/protocol.md §8). The message is opaque: encrypted by the Bisq desktop for
/// the phone, it is stored and forwarded, never parsed and never logged.
public struct BisqRelayContent: Sendable, Hashable {
    public let message: String
    /// `snd` on `GET /relay`, `isUrgent` on the POST routes: a sound, and APNs priority 10 / FCM high.
    public let urgent: Bool
    /// Asks APNs for `mutable-content`.
    public let mutableContent: Bool

    public init(message: String, urgent: Bool, mutableContent: Bool) {
        self.message = message
        self.urgent = urgent
        self.mutableContent = mutableContent
    }

    /// The `bisq_flags` column: bit 0 urgent, bit 1 mutable-content.
    public var flags: Int64 { (urgent ? 1 : 0) | (mutableContent ? 2 : 0) }

    public init(message: String, flags: Int64) {
        self.init(message: message, urgent: flags & 1 != 0, mutableContent: flags & 2 != 0)
    }
}

/// A Bisq relay push to queue.
public struct BisqRelayPush: Sendable, Hashable {
    public let platform: Platform
    /// Normalised (§1).
    public let deviceToken: String
    public let content: BisqRelayContent
    /// Unix seconds.
    public let now: Int64

    /// The wallet column of a Bisq push, 20 zero bytes: no wallet signs for it.
    public static let noWallet = [UInt8](repeating: 0, count: 20)

    public init(platform: Platform, deviceToken: String, content: BisqRelayContent, now: Int64) {
        self.platform = platform
        self.deviceToken = deviceToken
        self.content = content
        self.now = now
    }
}

/// One outbox row's progress.
public struct PushState: Sendable, Hashable {
    /// `queued`, `sent`, `failed` or `pruned`.
    public let status: String
    public let attempts: Int
    public let lastError: String?

    public init(status: String, attempts: Int, lastError: String?) {
        self.status = status
        self.attempts = attempts
        self.lastError = lastError
    }
}
