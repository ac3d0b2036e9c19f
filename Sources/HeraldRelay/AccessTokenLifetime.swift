import HeraldCore

/// How long an OAuth access token fetched from a peer (FCM's token endpoint, an upstream relay) is
/// kept (docs/protocol.md §4.3): its `expires_in` when that is a non-negative integer, never more than
/// an hour, and an hour when it is anything else. A lifetime the peer chose cannot keep a token forever
/// or overflow the clock arithmetic that follows.
enum AccessTokenLifetime {
    static let longest: Int64 = 3600

    static func seconds(expiresIn value: JSONValue?) -> Int64 {
        guard case .number(let text)? = value, let seconds = RemoteNumber.seconds(text) else { return longest }
        return min(seconds, longest)
    }
}
