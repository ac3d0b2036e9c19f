import HeraldCore
import HeraldRelay
import HeraldStore
import Testing

@testable import HeraldServer

/// What the outbox hands its providers for each kind of queued row (docs/protocol.md §4.2, §4.3, §8, §9): the
/// mapping the relay used to do itself, now the server's.
@Suite struct QueuedPushMappingTests {
    typealias F = ServerFixture
    static let queuedAt: Int64 = 1_763_769_600
    static let full = QueuedPushMapping(mode: .full, maxAgeSeconds: 3600)
    static let wakeUpOnly = QueuedPushMapping(mode: .none, maxAgeSeconds: 3600)

    static func item(_ kind: NotificationPayload.Kind) -> DeliveredNotification {
        let secret = kind == .secret
        return DeliveredNotification(
            kind: kind, sid: 42, epoch: 1_763_769_600_123,
            title: secret ? DeliveredNotification.secretTitle(app: "Desk") : "Trade accepted",
            body: secret ? DeliveredNotification.secretBody : "Offer 17", app: "Desk", icon: "https://d.example/i.png",
            url: "https://d.example", secret: secret ? "04ab" : "", subject: "Offer 17", message: "Pay 0.1 ETH",
            callToAction: "", image: "")
    }

    static func push(
        platform: Platform = .ios, token: String = F.iosToken, notification: DeliveredNotification?,
        bisq: BisqRelayContent? = nil, webPush: WebPushSubscription? = nil, channel: EthereumAddress? = nil,
        options: PushOptions = .none
    ) -> QueuedPush {
        QueuedPush(
            id: 7, sid: notification?.sid, wallet: F.key.address, platform: platform, deviceToken: token,
            apnsID: Array(0..<16), queuedAt: queuedAt, attempts: 2, notification: notification, bisq: bisq,
            webPushSubscription: webPush, channel: channel, options: options)
    }

    /// docs/protocol.md §11.4: the message's options on every push of it, the deadline the sooner of its ttl
    /// and the max age, the channel as APNs thread; under `none` no collapse id and no thread.
    @Test func aMessagesOptionsAndChannelReachEveryPush() throws {
        let options = try PushOptions(priority: .normal, timeToLive: 60, collapseID: "order-9")
        let push = Self.push(notification: Self.item(.targeted), channel: F.other.address, options: options)
        let message = Self.full.message(for: push)
        #expect(message.priority == .normal && message.collapseID == "order-9" && message.timeToLive == 60)
        #expect(message.expiration == Self.queuedAt + 60)
        #expect(message.threadID == F.other.address.checksummed)
        let hidden = Self.wakeUpOnly.message(for: push)
        #expect(hidden.collapseID == nil && hidden.threadID == nil)
        #expect(hidden.priority == .normal && hidden.timeToLive == 60 && hidden.expiration == Self.queuedAt + 60)
        // A ttl past the max age is cut to it; none keeps the max age.
        let long = Self.push(notification: Self.item(.targeted), options: try PushOptions(timeToLive: 86_400))
        #expect(Self.full.message(for: long).expiration == Self.queuedAt + 3600)
        #expect(
            Self.full.message(for: Self.push(notification: Self.item(.targeted))).expiration == Self.queuedAt + 3600)
    }

    /// The retry policy stops at the message's deadline, and a push of ttl 0 gets one attempt.
    @Test func theDeadlineStopsRetriesAndTTLZeroIsOneAttempt() throws {
        let policy = PushRetryPolicy(attempts: 10, maxAgeSeconds: 3600, baseSeconds: 1)
        let once = Self.push(notification: Self.item(.targeted), options: try PushOptions(timeToLive: 0))
        let busy = PushDelivery.retryable(reason: "APNs 503", retryAfter: nil)
        #expect(policy.result(for: once, busy, now: Self.queuedAt + 5000).disposition == .failed)
        #expect(once.isPastDeadline(now: Self.queuedAt + 5000, maxAgeSeconds: 3600) == false)
        let short = Self.push(notification: Self.item(.targeted), options: try PushOptions(timeToLive: 30))
        #expect(policy.result(for: short, busy, now: Self.queuedAt + 29).disposition == .failed)
        #expect(short.isPastDeadline(now: Self.queuedAt + 31, maxAgeSeconds: 3600))
        #expect(!short.isPastDeadline(now: Self.queuedAt + 30, maxAgeSeconds: 3600))
        let plain = Self.push(notification: Self.item(.targeted))
        guard case .retry = policy.result(for: plain, busy, now: Self.queuedAt + 29).disposition else {
            Issue.record("a push without ttl was not retried")
            return
        }
        #expect(plain.isPastDeadline(now: Self.queuedAt + 3601, maxAgeSeconds: 3600))
    }

    static func pairs(_ pairs: [(key: String, value: String)]?) -> [String] {
        (pairs ?? []).map { "\($0.key)=\($0.value)" }
    }

    @Test func aFeedItemCarriesItsSection42PayloadAndDeadline() {
        let message = Self.full.message(for: Self.push(notification: Self.item(.targeted)))
        #expect(message.platform == .ios && message.deviceToken == F.iosToken && message.id == Array(0..<16))
        #expect(message.expiration == Self.queuedAt + 3600)
        let content = message.notification
        #expect(content?.title == "Trade accepted" && content?.body == "Offer 17")
        #expect(
            Self.pairs(content?.data) == [
                "type=3", "sid=42", "epoch=1763769600123", "app=Desk", "icon=https://d.example/i.png",
                "url=https://d.example", "secret=", "asub=Offer 17", "amsg=Pay 0.1 ETH", "acta=", "aimg=",
            ])
        #expect(Self.pairs(content?.minimalData) == ["type=3", "sid=42", "epoch=1763769600123"])
        // No options on a queued row yet: every service gets its defaults.
        #expect(message.priority == nil && message.pushType == .alert && message.collapseID == nil)
        #expect(message.timeToLive == nil && message.badge == nil && message.threadID == nil)
        #expect(message.webPushSubscription == nil && message.bisq == nil)
    }

    @Test func aSecretItemKeepsItsGenericTextAndUnderNoneOnlyTheWakeUpGoes() {
        let secret = Self.push(notification: Self.item(.secret))
        let content = Self.full.message(for: secret).notification
        #expect(content?.title == "Desk has sent you a secret message!" && content?.body == "Open Herald to read it.")
        #expect(content?.data.first { $0.key == "secret" }?.value == "04ab")
        let quiet = Self.wakeUpOnly.message(for: secret).notification
        #expect(quiet?.title == "Herald" && quiet?.body == "You have a new notification.")
        #expect(Self.pairs(quiet?.data) == ["type=2", "sid=42", "epoch=1763769600123"])
        #expect(Self.pairs(quiet?.minimalData) == Self.pairs(quiet?.data))
    }

    @Test func theSetupConfirmationIsTheSameUnderFullAndNone() {
        for mapping in [Self.full, Self.wakeUpOnly] {
            let message = mapping.message(for: Self.push(notification: nil))
            let content = message.notification
            #expect(content?.title == "Herald" && content?.body == "Notifications are on for this device.")
            #expect(Self.pairs(content?.data) == ["type=setup", "sid=", "epoch=1763769600000"])
            #expect(Self.pairs(content?.minimalData) == Self.pairs(content?.data))
            #expect(message.expiration == Self.queuedAt + 3600)
        }
    }

    /// §8: Bisq's own content, whatever `push.content`, kept by APNs for four weeks.
    @Test func aBisqPushCarriesItsMessageAndFlagsForFourWeeks() {
        let stored = BisqRelayContent(message: "BisqMessageiOS|iv|ct", urgent: false, mutableContent: true)
        for mapping in [Self.full, Self.wakeUpOnly] {
            let message = mapping.message(for: Self.push(notification: nil, bisq: stored))
            #expect(
                message.bisq == BisqPushContent(message: "BisqMessageiOS|iv|ct", urgent: false, mutableContent: true))
            #expect(message.notification == nil)
            #expect(message.expiration == Self.queuedAt + 28 * 86_400)
            #expect(message.priority == nil && message.priorityOrDefault == .normal, "by its urgency")
        }
    }

    @Test func aWebPushPushTakesItsBindingsKeys() {
        let endpoint = "https://push.example.org/up/abc"
        let keys = WebPushSubscription(storedEndpoint: endpoint, p256dh: "BPk", auth: "c2VjcmV0")
        let message = Self.full.message(
            for: Self.push(platform: .webpush, token: endpoint, notification: Self.item(.broadcast), webPush: keys))
        #expect(message.platform == .webpush && message.deviceToken == endpoint)
        #expect(message.webPushSubscription == keys)
        #expect(message.notification?.data.first?.value == "1")
        let unbound = Self.full.message(for: Self.push(platform: .webpush, token: endpoint, notification: nil))
        #expect(unbound.webPushSubscription == nil, "no keys claimed: the provider refuses to send")
    }
}
