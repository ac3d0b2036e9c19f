/// The kinds of event a channel's webhook may ask for (docs/protocol.md §11.3), in their canonical order.
public enum WebhookEventKind: String, Sendable, Hashable, CaseIterable, Comparable {
    case subscribed, unsubscribed, failed

    private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}

/// What a channel's webhook receives, as the Webhook operation names it: comma-separated, no spaces, no
/// repeats, a non-empty subset of the kinds. Kept sorted in the canonical order, which answers and
/// storage use.
public struct WebhookEventSet: Sendable, Hashable {
    public let kinds: [WebhookEventKind]

    public init(_ kinds: Set<WebhookEventKind>) { self.kinds = kinds.sorted() }

    public static let all = WebhookEventSet(Set(WebhookEventKind.allCases))

    public func contains(_ kind: WebhookEventKind) -> Bool { kinds.contains(kind) }

    /// `subscribed,unsubscribed,failed` (canonical order), as stored.
    public var text: String { kinds.map(\.rawValue).joined(separator: ",") }

    /// Parses `events` as the operation signs it; any fault is `invalid_webhook`.
    public static func parse(_ text: String) throws(OperationRejection) -> WebhookEventSet {
        var seen = Set<WebhookEventKind>()
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let kind = WebhookEventKind(rawValue: String(name)) else {
                throw OperationRejection(
                    .invalidWebhook,
                    "events must be a comma-separated list of subscribed, unsubscribed, failed (no spaces)")
            }
            guard seen.insert(kind).inserted else {
                throw OperationRejection(.invalidWebhook, "events names \(kind.rawValue) twice")
            }
        }
        return WebhookEventSet(seen)
    }

    /// Reads back a stored set (written by ``text``).
    public static func stored(_ text: String) throws(OperationRejection) -> WebhookEventSet {
        try parse(text)
    }
}
