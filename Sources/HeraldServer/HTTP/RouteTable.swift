public import HTTPTypes

/// Every route the server answers, in one place: the router is built from it, 405 is told apart
/// from 404 with it, and a test checks it against `Schemas/openapi.yaml`.
public enum RouteTable {
    public struct Route: Sendable, Hashable {
        public let method: HTTPRequest.Method
        /// OpenAPI form: `/v1/users/{wallet}/pubkey`.
        public let path: String

        /// Hummingbird form: `/v1/users/:wallet/pubkey`.
        var routerPath: String {
            path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                segment.hasPrefix("{") && segment.hasSuffix("}")
                    ? ":" + segment.dropFirst().dropLast() : String(segment)
            }.joined(separator: "/")
        }
    }

    public static let info = Route(method: .get, path: "/v1/info")
    public static let devices = Route(method: .post, path: "/v1/devices")
    public static let webpush = Route(method: .post, path: "/v1/webpush")
    public static let publicKey = Route(method: .get, path: "/v1/users/{wallet}/pubkey")
    public static let channel = Route(method: .get, path: "/v1/channels/{channel}")
    public static let subscriptions = Route(method: .post, path: "/v1/subscriptions")
    public static let userSubscriptions = Route(method: .get, path: "/v1/users/{wallet}/subscriptions")
    public static let notifications = Route(method: .post, path: "/v1/notifications")
    public static let feeds = Route(method: .get, path: "/v1/users/{wallet}/feeds")
    public static let notificationStatus = Route(method: .get, path: "/v1/notifications/{sid}")
    /// docs/protocol.md §10.
    public static let channelSettings = Route(method: .post, path: "/v1/channel-settings")
    public static let subscriberSettings = Route(method: .post, path: "/v1/subscriber-settings")
    public static let mutes = Route(method: .post, path: "/v1/mutes")
    public static let read = Route(method: .post, path: "/v1/read")
    /// docs/protocol.md §11.
    public static let delegates = Route(method: .post, path: "/v1/delegates")
    public static let webhooks = Route(method: .post, path: "/v1/webhooks")
    public static let relayToken = Route(method: .post, path: "/v1/relay/token")
    public static let relayPushes = Route(method: .post, path: "/v1/relay/pushes")
    public static let relayUsage = Route(method: .get, path: "/v1/relay/usage")
    public static let health = Route(method: .get, path: "/healthz")
    public static let metrics = Route(method: .get, path: "/metrics")

    /// docs/protocol.md §8, served only with `bisq.relay` on.
    public static let bisqRelay = Route(method: .get, path: "/relay")
    public static let bisqAPNs = Route(method: .post, path: "/v1/apns/device/{token}")
    public static let bisqFCM = Route(method: .post, path: "/v1/fcm/device/{token}")
    public static let bisq: [Route] = [bisqRelay, bisqAPNs, bisqFCM]

    /// The GET routes that take FeedAccess: metered with the POST routes (CLI.md, `--rate-limit`).
    static let feedAccessReads: [Route] = [feeds, userSubscriptions, notificationStatus]

    public static let all: [Route] =
        [
            info, devices, webpush, publicKey, channel, subscriptions, userSubscriptions, notifications, feeds,
            notificationStatus, channelSettings, subscriberSettings, mutes, read, delegates, webhooks, relayToken,
            relayPushes,
            relayUsage, health, metrics,
        ] + bisq

    /// The routes a server with these settings answers: a route turned off is unknown (404), not 405.
    static func served(bisqRelay: Bool) -> [Route] {
        bisqRelay ? all : all.filter { !bisq.contains($0) }
    }

    /// Whether some route among `routes` has this path (with any method), for 405 versus 404.
    static func knowsPath(_ requestPath: String, among routes: [Route] = all) -> Bool {
        let segments = requestPath.split(separator: "/", omittingEmptySubsequences: false)
        return routes.contains { route in
            let pattern = route.path.split(separator: "/", omittingEmptySubsequences: false)
            return pattern.count == segments.count
                && zip(pattern, segments).allSatisfy { $0.hasPrefix("{") ? !$1.isEmpty : $0 == $1 }
        }
    }
}
