public import HeraldCore

/// What a push shows and carries (docs/protocol.md §4.2, §4.3), before it is shaped for APNs or FCM.
public struct PushContent: Sendable, Hashable {
    public let title: String
    public let body: String
    /// Every value a string (FCM requires it).
    public let data: [(key: String, value: String)]
    /// The wake-up form of `data`: `type`, `sid`, `epoch` only, for pushes too large or `push.content = none`.
    public let minimalData: [(key: String, value: String)]

    public init(
        title: String, body: String, data: [(key: String, value: String)], minimalData: [(key: String, value: String)]
    ) {
        self.title = title
        self.body = body
        self.data = data
        self.minimalData = minimalData
    }

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

    /// `data` as a JSON object of strings.
    static func object(_ pairs: [(key: String, value: String)]) -> [(key: String, value: JSONValue)] {
        pairs.map { (key: $0.key, value: .string($0.value)) }
    }

    /// The APNs body `{"aps":{"alert":{"title","body"},"mutable-content":1,"sound":"default"[,"badge":N]
    /// [,"thread-id":"…"]}, …data}`, with the minimal data when the full one would pass 4096 bytes.
    public func apnsBody(badge: Int? = nil, threadID: String? = nil) -> [UInt8] {
        let alert = JSONValue.object([("title", .string(title)), ("body", .string(body))])
        var members: [(key: String, value: JSONValue)] = [
            ("alert", alert), ("mutable-content", .number("1")), ("sound", .string("default")),
        ]
        if let badge { members.append(("badge", .number(String(badge)))) }
        if let threadID { members.append(("thread-id", .string(threadID))) }
        let aps = JSONValue.object(members)
        func encoded(_ pairs: [(key: String, value: String)]) -> [UInt8] {
            JSONValue.object([("aps", aps)] + Self.object(pairs)).jsonBytes
        }
        let full = encoded(data)
        return full.count > Self.maximumBytes ? encoded(minimalData) : full
    }

    /// The FCM HTTP v1 body with the provider's `android` options; the size rule applies to
    /// `notification` + `data` as compact JSON.
    public func fcmBody(token: String, android: JSONValue) -> [UInt8] {
        let notification = JSONValue.object([("title", .string(title)), ("body", .string(body))])
        func measured(_ pairs: [(key: String, value: String)]) -> Int {
            JSONValue.object([("notification", notification), ("data", .object(Self.object(pairs)))]).jsonBytes.count
        }
        let pairs = measured(data) > Self.maximumBytes ? minimalData : data
        let message = JSONValue.object([
            ("token", .string(token)), ("notification", notification), ("data", .object(Self.object(pairs))),
            ("android", android),
        ])
        return JSONValue.object([("message", message)]).jsonBytes
    }
}
