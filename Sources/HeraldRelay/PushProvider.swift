public import HeraldCore
public import HeraldStore
public import Logging

/// Something that hands a queued push to a push service (APNs, FCM). Implementations never throw:
/// every way a send can end is a ``PushDelivery`` that the outbox records.
public protocol PushProvider: Sendable {
    /// For logs and metrics: `apns`, `fcm`, `none`.
    var name: String { get }

    func deliver(_ push: QueuedPush) async -> PushDelivery

    /// Sends a push that has no outbox row here (one a downstream forwarded to this upstream).
    func deliver(_ message: PushMessage) async -> PushDelivery
}

extension PushProvider {
    /// For providers that only drain the outbox (test doubles): a forwarded push fails, unsent.
    public func deliver(_ message: PushMessage) async -> PushDelivery {
        .failed(reason: "\(name) cannot send forwarded pushes")
    }
}

/// How one send ended.
public enum PushDelivery: Sendable, Hashable {
    /// The service accepted it.
    case sent
    /// Worth another try later (429, 5xx, network): after `retryAfter` seconds when the service said so.
    case retryable(reason: String, retryAfter: Int64?)
    /// Not worth retrying.
    case failed(reason: String)
    /// The device token is dead (PROTOCOL §4.3's reasons only).
    case deadToken(reason: String)
    /// Not sent: its push service already has as many sends in flight as it may (Web Push's
    /// `webpush.originConcurrency`). Tried again shortly, without counting an attempt.
    case deferred(reason: String)
}

/// The providers of a running server, by platform. A platform with none gets the logging provider:
/// its pushes are drained and fail (PROTOCOL §4.3: a push for an unconfigured provider fails), as
/// Bitwarden's F-Droid build runs without push credentials.
public struct PushProviders: Sendable {
    public var apns: (any PushProvider)?
    public var fcm: (any PushProvider)?
    /// Web Push (PROTOCOL §9), when a VAPID key is configured.
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

/// The no-op provider: logs each push (token by prefix only, never content) and reports it failed,
/// because nothing was sent.
public struct LoggingPushProvider: PushProvider {
    public let name = "none"
    let logger: Logger

    public init(logger: Logger) { self.logger = logger }

    public func deliver(_ push: QueuedPush) async -> PushDelivery {
        let service = Self.service(push.platform)
        logger.debug(
            "push not sent: no \(service) credentials configured",
            metadata: [
                "push": "\(push.id)", "sid": "\(push.sid.map(String.init) ?? "-")",
                "platform": "\(push.platform.rawValue)", "token": "\(DeviceToken.logPrefix(push.deviceToken))",
            ])
        return .failed(reason: "no \(service) provider configured")
    }

    public func deliver(_ message: PushMessage) async -> PushDelivery {
        .failed(reason: "no \(Self.service(message.platform)) provider configured")
    }

    static func service(_ platform: Platform) -> String {
        switch platform {
        case .ios, .iosSandbox: return "APNs"
        case .android: return "FCM"
        case .webpush: return "Web Push"
        }
    }
}
