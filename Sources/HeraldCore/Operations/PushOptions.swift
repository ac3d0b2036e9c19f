/// A notification's say in how its pushes are delivered (docs/protocol.md §11.4): the payload's optional
/// top-level `"push":{"priority":"high"|"normal","ttl":<0…2419200>,"collapseId":"<1–32 of [A-Za-z0-9_-]>"}`.
/// Every key is optional; another key, or a value of another type or range, is `invalid_payload`.
public struct PushOptions: Sendable, Hashable {
    public enum Priority: String, Sendable, Hashable, CaseIterable {
        case high, normal
    }

    /// The longest `ttl`: 28 days, FCM's own maximum.
    public static let maximumTimeToLive: Int64 = 2_419_200

    public let priority: Priority?
    /// Seconds the push may wait: its deadline is the queue time plus the smaller of this and the server's
    /// maximum age; 0 means one attempt, however late, never retried.
    public let timeToLive: Int64?
    public let collapseID: String?

    public init(
        priority: Priority? = nil, timeToLive: Int64? = nil, collapseID: String? = nil
    )
        throws(OperationRejection)
    {
        if let timeToLive, !(0...Self.maximumTimeToLive).contains(timeToLive) {
            throw OperationRejection(.invalidPayload, "push.ttl must be an integer from 0 to \(Self.maximumTimeToLive)")
        }
        if let collapseID, !Self.isCollapseID(collapseID) {
            throw OperationRejection(.invalidPayload, "push.collapseId must be 1 to 32 of A-Z, a-z, 0-9, _ and -")
        }
        self.init(checked: priority, timeToLive, collapseID)
    }

    /// No options: the pushes follow §4.3 and §9 unchanged.
    public static let none = PushOptions(checked: nil, nil, nil)

    private init(checked priority: Priority?, _ timeToLive: Int64?, _ collapseID: String?) {
        self.priority = priority
        self.timeToLive = timeToLive
        self.collapseID = collapseID
    }

    /// No option given: the pushes follow §4.3 and §9 unchanged.
    public var isEmpty: Bool { priority == nil && timeToLive == nil && collapseID == nil }

    static func parse(_ json: JSONValue) throws(OperationRejection) -> PushOptions {
        guard let members = json.objectMembers else {
            throw OperationRejection(.invalidPayload, "push must be an object")
        }
        var seen = Set<String>()
        for member in members {
            guard ["priority", "ttl", "collapseId"].contains(member.key) else {
                throw OperationRejection(.invalidPayload, "push has an unknown key \"\(member.key.prefix(32))\"")
            }
            guard seen.insert(member.key).inserted else {
                throw OperationRejection(.invalidPayload, "push has \"\(member.key)\" twice")
            }
        }
        var priority: Priority?
        if let value = json["priority"] {
            guard let text = value.stringValue, let parsed = Priority(rawValue: text) else {
                throw OperationRejection(.invalidPayload, "push.priority must be \"high\" or \"normal\"")
            }
            priority = parsed
        }
        var timeToLive: Int64?
        if let value = json["ttl"] {
            guard let seconds = SettingInteger.parse(value) else {
                throw OperationRejection(
                    .invalidPayload, "push.ttl must be an integer from 0 to \(Self.maximumTimeToLive)")
            }
            timeToLive = seconds
        }
        var collapseID: String?
        if let value = json["collapseId"] {
            guard let text = value.stringValue else {
                throw OperationRejection(.invalidPayload, "push.collapseId must be a string")
            }
            collapseID = text
        }
        return try PushOptions(priority: priority, timeToLive: timeToLive, collapseID: collapseID)
    }

    static func isCollapseID(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x5F || byte == 0x2D
            }
    }

    /// The `push` object, keys in the protocol's order; nil when empty.
    public var json: JSONValue? {
        guard !isEmpty else { return nil }
        var members: [(String, JSONValue)] = []
        if let priority { members.append(("priority", .string(priority.rawValue))) }
        if let timeToLive { members.append(("ttl", .number(String(timeToLive)))) }
        if let collapseID { members.append(("collapseId", .string(collapseID))) }
        return .object(members)
    }
}
