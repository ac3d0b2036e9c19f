import HeraldCore
public import HeraldStore

/// What a push shows and carries (PROTOCOL §4.2, §4.3), before it is shaped for APNs or FCM.
public struct PushContent: Sendable, Hashable {
    public let title: String
    public let body: String
    /// Every value a string (FCM requires it).
    public let data: [(key: String, value: String)]
    /// The wake-up form of `data`: `type`, `sid`, `epoch` only, for pushes too large or `push.content = none`.
    public let minimalData: [(key: String, value: String)]

    public static func == (lhs: PushContent, rhs: PushContent) -> Bool {
        lhs.title == rhs.title && lhs.body == rhs.body && lhs.data.elementsEqual(rhs.data, by: ==)
            && lhs.minimalData.elementsEqual(rhs.minimalData, by: ==)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(title)
        hasher.combine(body)
        for (key, value) in data {
            hasher.combine(key)
            hasher.combine(value)
        }
    }

    /// Whether pushes carry the message (`full`) or only wake the app (`none`: nothing of it reaches
    /// Apple or Google).
    public enum Mode: String, Sendable, Hashable {
        case full
        case none
    }

    /// The largest push body, in bytes, before the data is cut to its minimal form.
    public static let maximumBytes = 4096

    public static let setupTitle = "Herald"
    public static let setupBody = "Notifications are on for this device."
    public static let wakeUpTitle = "Herald"
    public static let wakeUpBody = "You have a new notification."

    /// The content of a queued push: its feed item's §4.2 payload, or the setup confirmation.
    public static func of(_ push: QueuedPush, mode: Mode) -> PushContent {
        guard let notification = push.notification else {
            let setup = [("type", "setup"), ("sid", ""), ("epoch", String(push.queuedAt * 1000))]
            return PushContent(
                title: setupTitle, body: setupBody, data: setup.map { (key: $0.0, value: $0.1) },
                minimalData: setup.map { (key: $0.0, value: $0.1) })
        }
        let minimal = [
            (key: "type", value: notification.kind.rawValue), (key: "sid", value: String(notification.sid)),
            (key: "epoch", value: String(notification.epoch)),
        ]
        if mode == .none {
            return PushContent(title: wakeUpTitle, body: wakeUpBody, data: minimal, minimalData: minimal)
        }
        let full: [(key: String, value: String)] =
            notification.data.objectMembers?.map { (key: $0.key, value: $0.value.stringValue ?? "") } ?? minimal
        return PushContent(title: notification.title, body: notification.body, data: full, minimalData: minimal)
    }

    /// `data` as a JSON object of strings.
    static func object(_ pairs: [(key: String, value: String)]) -> [(key: String, value: JSONValue)] {
        pairs.map { (key: $0.key, value: .string($0.value)) }
    }

    /// The APNs body `{"aps":{"alert":{"title","body"},"mutable-content":1,"sound":"default"}, …data}`,
    /// with the minimal data when the full one would pass 4096 bytes.
    public func apnsBody() -> [UInt8] {
        let alert = JSONValue.object([("title", .string(title)), ("body", .string(body))])
        func encoded(_ pairs: [(key: String, value: String)]) -> [UInt8] {
            let aps = JSONValue.object([
                ("alert", alert),
                ("mutable-content", .number("1")), ("sound", .string("default")),
            ])
            return JSONValue.object([("aps", aps)] + Self.object(pairs)).jsonBytes
        }
        let full = encoded(data)
        return full.count > Self.maximumBytes ? encoded(minimalData) : full
    }

    /// The FCM HTTP v1 body; the size rule applies to `notification` + `data` as compact JSON.
    public func fcmBody(token: String) -> [UInt8] {
        let notification = JSONValue.object([("title", .string(title)), ("body", .string(body))])
        func measured(_ pairs: [(key: String, value: String)]) -> Int {
            JSONValue.object([("notification", notification), ("data", .object(Self.object(pairs)))]).jsonBytes.count
        }
        let pairs = measured(data) > Self.maximumBytes ? minimalData : data
        let message = JSONValue.object([
            ("token", .string(token)), ("notification", notification), ("data", .object(Self.object(pairs))),
            ("android", .object([("priority", .string("high"))])),
        ])
        return JSONValue.object([("message", message)]).jsonBytes
    }
}
