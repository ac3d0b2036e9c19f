/// A webhook's URL, checked as docs/protocol.md §11.3 says: absolute, at most 1000 bytes of printable
/// ASCII, no user info, no fragment, `https`; `http` only to an IP literal inside the operator's
/// `webhooks.allowNetworks` (a receiver on its own network: the body is signed, not encrypted); an IP
/// literal in §9's refused ranges, unless allowed, is refused here already. A name is checked when it is
/// resolved, at each delivery.
public enum WebhookTarget {
    public static let maximumURLBytes = 1000

    /// `policy` nil checks the form alone (step 1 of §2.3, before the server's networks are consulted).
    public static func validate(
        _ url: String, policy: WebPushNetworkPolicy?
    ) throws(OperationRejection) -> WebPushEndpoint {
        guard url.utf8.count <= maximumURLBytes else {
            throw OperationRejection(.invalidWebhook, "url exceeds \(maximumURLBytes) bytes")
        }
        guard let target = WebPushEndpoint(url, allowingHTTP: true) else {
            throw OperationRejection(
                .invalidWebhook, "url must be an absolute https:// URL without user info or fragment")
        }
        guard let policy else { return target }
        if target.scheme == "http" {
            guard let address = target.literalAddress, policy.allowed.contains(where: { $0.contains(address) })
            else {
                throw OperationRejection(
                    .invalidWebhook, "an http:// webhook must name an IP address inside webhooks.allowNetworks")
            }
        }
        if let address = target.literalAddress, let range = policy.refusal(of: address) {
            throw OperationRejection(.invalidWebhook, "url host lies in the refused network \(range)")
        }
        return target
    }
}
