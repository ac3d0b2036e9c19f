public import HeraldCore

/// A read-sync push (docs/protocol.md §10): the wallet's unread count after a read mark, sent to its phones
/// so that a badge read elsewhere clears. APNs gets a badge-only body, FCM a data-only `read` message.
public struct ReadSyncContent: Sendable, Hashable {
    /// The wallet's unread items that are not spam.
    public let unread: Int
    /// Milliseconds: when the mark was queued.
    public let epoch: Int64

    /// APNs `apns-collapse-id`: a newer count replaces an older one on the device.
    public static let apnsCollapseID = "herald-badge"

    public init(unread: Int, epoch: Int64) {
        self.unread = unread
        self.epoch = epoch
    }

    /// `{"aps":{"badge":N}}`.
    public var apnsBody: [UInt8] {
        JSONValue.object([("aps", .object([("badge", .number(String(unread)))]))]).jsonBytes
    }

    /// `{"message":{"token","data":{"type":"read","unread":"N","epoch":"<ms>"},"android":{…}}}`.
    public func fcmBody(token: String, android: JSONValue) -> [UInt8] {
        JSONValue.object([
            (
                "message",
                .object([
                    ("token", .string(token)),
                    (
                        "data",
                        .object([
                            ("type", .string("read")), ("unread", .string(String(unread))),
                            ("epoch", .string(String(epoch))),
                        ])
                    ),
                    ("android", android),
                ])
            )
        ]).jsonBytes
    }

    /// docs/protocol.md §7's `payload` of a `"kind":"read"` push: `{"unread":"N","epoch":"<ms>"}`.
    public var relayedPayload: JSONValue {
        .object([("unread", .string(String(unread))), ("epoch", .string(String(epoch)))])
    }

    /// Reads §7's payload back (an upstream); nil when it is not of that form.
    public init?(relayed payload: JSONValue) {
        guard let unreadText = payload["unread"]?.stringValue, let unread = Int(unreadText), unread >= 0,
            let epochText = payload["epoch"]?.stringValue, let epoch = Int64(epochText)
        else { return nil }
        self.init(unread: unread, epoch: epoch)
    }
}
