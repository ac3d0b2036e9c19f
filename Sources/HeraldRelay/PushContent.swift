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
        let full = apnsBody(data, badge: badge, threadID: threadID)
        return full.count > Self.maximumBytes ? apnsBody(minimalData, badge: badge, threadID: threadID) : full
    }

    /// Written straight into bytes, not built as a `JSONValue` first: that tree (its arrays of members,
    /// a string value per pair) cost more than the writing, a sixth of a push's instructions.
    private func apnsBody(_ pairs: [(key: String, value: String)], badge: Int?, threadID: String?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        out.append(contentsOf: #"{"aps":{"alert":"#.utf8)
        appendAlert(to: &out)
        out.append(contentsOf: #","mutable-content":1,"sound":"default""#.utf8)
        if let badge {
            out.append(contentsOf: #","badge":"#.utf8)
            out.append(contentsOf: String(badge).utf8)
        }
        if let threadID {
            out.append(contentsOf: #","thread-id":"#.utf8)
            JSONValue.appendJSONString(threadID, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        if !pairs.isEmpty {
            out.append(UInt8(ascii: ","))
            Self.appendMembers(pairs, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The FCM HTTP v1 body with the provider's `android` options; the size rule applies to
    /// `notification` + `data` as compact JSON.
    public func fcmBody(token: String, android: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        out.append(contentsOf: #"{"message":{"token":"#.utf8)
        JSONValue.appendJSONString(token, to: &out)
        // `{"notification":…,"data":…}` is this part with its braces: measured as written, and written
        // again with the minimal data when too long.
        out.append(UInt8(ascii: ","))
        let measuredFrom = out.count
        out.append(contentsOf: #""notification":"#.utf8)
        appendAlert(to: &out)
        out.append(contentsOf: #","data":"#.utf8)
        let dataStart = out.count
        Self.appendObject(data, to: &out)
        if out.count - measuredFrom + 2 > Self.maximumBytes {
            out.removeSubrange(dataStart...)
            Self.appendObject(minimalData, to: &out)
        }
        out.append(contentsOf: #","android":"#.utf8)
        android.appendJSON(to: &out)
        out.append(contentsOf: "}}".utf8)
        return out
    }

    /// `{"title":…,"body":…}`
    private func appendAlert(to out: inout [UInt8]) {
        out.append(contentsOf: #"{"title":"#.utf8)
        JSONValue.appendJSONString(title, to: &out)
        out.append(contentsOf: #","body":"#.utf8)
        JSONValue.appendJSONString(body, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func appendObject(_ pairs: [(key: String, value: String)], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        appendMembers(pairs, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// `"key":"value"` for each pair, comma-separated, without braces.
    private static func appendMembers(_ pairs: [(key: String, value: String)], to out: inout [UInt8]) {
        for (position, (key, value)) in pairs.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.appendJSONString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONValue.appendJSONString(value, to: &out)
        }
    }
}
