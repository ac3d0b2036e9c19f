/// A Bisq push (docs/protocol.md §8): the message as the Bisq desktop sent it, encrypted for the phone and
/// opaque to the server, with its two flags. The store keeps its own record of it; the server maps one
/// to the other.
public struct BisqPushContent: Sendable, Hashable {
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
}
