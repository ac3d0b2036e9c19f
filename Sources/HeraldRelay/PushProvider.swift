public import HeraldCore
public import Logging

/// Something that hands a push to a push service (APNs, FCM, Web Push, an upstream relay): an outbox
/// row the server mapped, or a push a downstream forwarded (docs/protocol.md §7), alike. Implementations never
/// throw: every way a send can end is a ``PushDelivery`` that the outbox records.
public protocol PushProvider: Sendable {
    /// For logs and metrics: `apns`, `fcm`, `none`.
    var name: String { get }

    func deliver(_ message: PushMessage) async -> PushDelivery
}

/// How one send ended.
public enum PushDelivery: Sendable, Hashable {
    /// The service accepted it.
    case sent
    /// Worth another try later (429, 5xx, network): after `retryAfter` seconds when the service said so.
    case retryable(reason: String, retryAfter: Int64?)
    /// Not worth retrying.
    case failed(reason: String)
    /// The device token is dead (docs/protocol.md §4.3's reasons only).
    case deadToken(reason: String)
    /// Not sent: its push service already has as many sends in flight as it may (Web Push's
    /// `webpush.originConcurrency`). Tried again shortly, without counting an attempt.
    case deferred(reason: String)
}

/// The providers of a running server, by platform. A platform with none gets the logging provider:
/// its pushes are drained and fail (docs/protocol.md §4.3: a push for an unconfigured provider fails), as
/// Bitwarden's F-Droid build runs without push credentials.
public struct PushProviders: Sendable {
    public var apns: (any PushProvider)?
    public var fcm: (any PushProvider)?
    /// Web Push (docs/protocol.md §9), when a VAPID key is configured.
    public var webpush: (any PushProvider)?
    let unconfigured: LoggingPushProvider

    public init(
        apns: (any PushProvider)? = nil, fcm: (any PushProvider)? = nil, webpush: (any PushProvider)? = nil,
        logger: Logger
    ) {
        self.apns = apns
        self.fcm = fcm
        self.webpush = webpush
        self.unconfigured = LoggingPushProvider(logger: logger)
    }

    /// Platform groups with a worker each, so that a provider that is down or slow never holds up
    /// the other: APNs's two hosts, FCM, and Web Push (many push services, one lane).
    public static let lanes: [Set<Platform>] = [[.ios, .iosSandbox], [.android], [.webpush]]

    public func provider(for platform: Platform) -> any PushProvider {
        switch platform {
        case .ios, .iosSandbox: return apns ?? unconfigured
        case .android: return fcm ?? unconfigured
        case .webpush: return webpush ?? unconfigured
        }
    }
}

/// The no-op provider: logs each push (its `apns-id` and platform, never content) and reports it
/// failed, because nothing was sent.
public struct LoggingPushProvider: PushProvider {
    public let name = "none"
    let logger: Logger

    public init(logger: Logger) { self.logger = logger }

    public func deliver(_ message: PushMessage) async -> PushDelivery {
        let service = Self.service(message.platform)
        // No token, not even its prefix: the push may be a forwarded one, and an upstream keeps no device
        // token in its logs (docs/protocol.md §7). The outbox row has the same apns-id.
        logger.debug(
            "push not sent: no \(service) credentials configured",
            metadata: ["push": "\(APNsProvider.uuid(message.id))", "platform": "\(message.platform.rawValue)"])
        return .failed(reason: "no \(service) provider configured")
    }

    static func service(_ platform: Platform) -> String {
        switch platform {
        case .ios, .iosSandbox: return "APNs"
        case .android: return "FCM"
        case .webpush: return "Web Push"
        }
    }
}
