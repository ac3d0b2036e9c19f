import HeraldCore
import HeraldRelay
import HeraldStore

/// What an outbox row becomes for its provider: the relay knows nothing of the store, so the server reads
/// each claimed push into a ``PushMessage``. Its content is the feed item's §4.2 payload (its wake-up
/// form under `push.content = none`), the setup confirmation, or a Bisq push's own (docs/protocol.md §4.3, §8);
/// its deadline is the queue time plus `push.maxAgeSeconds` (a Bisq push's, four weeks: §8), or sooner with
/// the message's `ttl`; a Web Push push takes its binding's keys (§9). A notification's push carries its
/// message's options and, on APNs, its badge and the channel as `thread-id` (§10, §11.4); a read-sync push
/// (§10) is sent at normal priority, collapsed on APNs under `herald-badge`.
struct QueuedPushMapping: Sendable {
    let mode: PushContent.Mode
    let maxAgeSeconds: Int64
    let threads = ChannelThreads()

    func message(for push: QueuedPush) -> PushMessage {
        let content: PushMessage.Content
        let lifetime: Int64
        if push.readSync {
            let apple = push.platform.isApple
            return PushMessage(
                platform: push.platform, deviceToken: push.deviceToken, id: push.apnsID,
                expiration: push.queuedAt + maxAgeSeconds,
                content: .readSync(ReadSyncContent(unread: push.badge ?? 0, epoch: push.queuedAt * 1000)),
                priority: .normal, collapseID: apple ? ReadSyncContent.apnsCollapseID : nil)
        }
        if let bisq = push.bisq {
            content = .bisq(
                BisqPushContent(message: bisq.message, urgent: bisq.urgent, mutableContent: bisq.mutableContent))
            // What APNs is asked to keep it for; the outbox still stops retrying at the max age.
            lifetime = BisqPushBody.apnsExpirySeconds
        } else if let notification = push.notification {
            return PushMessage(
                platform: push.platform, deviceToken: push.deviceToken, id: push.apnsID,
                expiration: push.deadline(maxAgeSeconds: maxAgeSeconds),
                content: .notification(Self.content(of: notification, mode: mode)),
                priority: push.options.priority.flatMap { PushMessage.Priority(rawValue: $0.rawValue) },
                // Under `none` nothing of the message reaches the service, not even who sent it (§11.4).
                collapseID: mode == .none ? nil : push.options.collapseID, timeToLive: push.options.timeToLive,
                badge: push.platform.isApple ? push.badge : nil,
                threadID: mode == .none ? nil : push.channel.map(threads.thread(of:)),
                webPushSubscription: push.webPushSubscription)
        } else {
            content = .notification(Self.setupConfirmation(queuedAt: push.queuedAt))
            lifetime = maxAgeSeconds
        }
        return PushMessage(
            platform: push.platform, deviceToken: push.deviceToken, id: push.apnsID,
            expiration: push.queuedAt + lifetime, content: content, webPushSubscription: push.webPushSubscription)
    }

    /// A feed item's push: its §4.2 payload, every `data` value a string, with `{type, sid, epoch}` as the
    /// minimal form; under `none` only that, behind the generic wake-up text.
    static func content(of notification: DeliveredNotification, mode: PushContent.Mode) -> PushContent {
        let minimal = [
            (key: "type", value: notification.kind.rawValue), (key: "sid", value: String(notification.sid)),
            (key: "epoch", value: String(notification.epoch)),
        ]
        if mode == .none {
            return PushContent(
                title: PushContent.wakeUpTitle, body: PushContent.wakeUpBody, data: minimal, minimalData: minimal)
        }
        let full: [(key: String, value: String)] =
            notification.data.objectMembers?.map { (key: $0.key, value: $0.value.stringValue ?? "") } ?? minimal
        return PushContent(title: notification.title, body: notification.body, data: full, minimalData: minimal)
    }

    /// The push a new binding queues (§4.3): nothing of a message in it, so `none` leaves it as it is.
    /// Its `epoch` is the queue time in milliseconds.
    static func setupConfirmation(queuedAt: Int64) -> PushContent {
        let data = [
            (key: "type", value: "setup"), (key: "sid", value: ""), (key: "epoch", value: String(queuedAt * 1000)),
        ]
        return PushContent(
            title: PushContent.setupTitle, body: PushContent.setupBody, data: data, minimalData: data)
    }
}
