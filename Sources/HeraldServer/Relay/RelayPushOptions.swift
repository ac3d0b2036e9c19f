import HeraldCore
import HeraldRelay

/// A forwarded push's optional fields (docs/protocol.md §7), which this upstream applies as it would to its own
/// pushes (§10, §11.4): `priority`, `collapseId`, `threadId`, `ttl`, `badge`. One of the wrong type or
/// range refuses the request (`invalid_payload`); a field §7 does not name is ignored.
struct RelayPushOptions {
    var priority: PushMessage.Priority?
    var collapseID: String?
    var threadID: String?
    var timeToLive: Int64?
    var badge: Int?

    /// §11.4's longest `ttl`: four weeks.
    static let maximumTimeToLive: Int64 = 2_419_200
    static let maximumCollapseIDLength = 32

    init(_ item: JSONValue, at: String) throws {
        if let value = item["priority"] {
            guard let priority = value.stringValue.flatMap(PushMessage.Priority.init(rawValue:)) else {
                throw APIError(.invalidPayload, "\(at).priority must be high or normal")
            }
            self.priority = priority
        }
        if let value = item["collapseId"] {
            guard let collapseID = value.stringValue, Self.isCollapseID(collapseID) else {
                throw APIError(.invalidPayload, "\(at).collapseId must be 1 to 32 of A-Z a-z 0-9 _ -")
            }
            self.collapseID = collapseID
        }
        if let value = item["threadId"] {
            guard let threadID = value.stringValue else {
                throw APIError(.invalidPayload, "\(at).threadId must be a string")
            }
            self.threadID = threadID
        }
        if let value = item["ttl"] {
            guard case .number(let text) = value, let seconds = Int64(text),
                (0...Self.maximumTimeToLive).contains(seconds)
            else { throw APIError(.invalidPayload, "\(at).ttl must be an integer from 0 to \(Self.maximumTimeToLive)") }
            timeToLive = seconds
        }
        if let value = item["badge"] {
            guard case .number(let text) = value, let count = Int(text), count >= 0 else {
                throw APIError(.invalidPayload, "\(at).badge must be an integer of at least 0")
            }
            badge = count
        }
    }

    /// §11.4's form: 1 to 32 characters of `[A-Za-z0-9_-]` (what Web Push's `Topic` allows too).
    static func isCollapseID(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...maximumCollapseIDLength).contains(bytes.count)
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    return true
                default:
                    return false
                }
            }
    }
}
