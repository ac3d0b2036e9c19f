/// What a recipient gets (docs/protocol.md §4.2): a feed item's `payload` and the data of its push.
///
/// ```json
/// { "notification": { "title": "…", "body": "…" },
///   "data": { "type": "2", "sid": "1234", "epoch": "1763769600123", "app": "…", "icon": "…", "url": "…",
///             "secret": "…", "asub": "…", "amsg": "…", "acta": "…", "aimg": "…" } }
/// ```
/// Every `data` value is a string (FCM requires it); `epoch` is milliseconds.
public struct DeliveredNotification: Sendable, Hashable {
    public var kind: NotificationPayload.Kind
    public var sid: Int64
    /// Milliseconds.
    public var epoch: Int64
    public var title: String
    public var body: String
    public var app: String
    public var icon: String
    public var url: String
    /// This recipient's ECIES secret (type 2), else empty.
    public var secret: String
    public var subject: String
    public var message: String
    public var callToAction: String
    public var image: String

    public init(
        kind: NotificationPayload.Kind, sid: Int64, epoch: Int64, title: String, body: String, app: String,
        icon: String, url: String, secret: String, subject: String, message: String, callToAction: String,
        image: String
    ) {
        self.kind = kind
        self.sid = sid
        self.epoch = epoch
        self.title = title
        self.body = body
        self.app = app
        self.icon = icon
        self.url = url
        self.secret = secret
        self.subject = subject
        self.message = message
        self.callToAction = callToAction
        self.image = image
    }

    /// The visible text of a type-2 message: generic, so that Apple and Google see nothing of it.
    public static func secretTitle(app: String) -> String { "\(app) has sent you a secret message!" }
    public static let secretBody = "Open Herald to read it."

    /// The `data` object, every value a string.
    public var data: JSONValue {
        .object([
            ("type", .string(kind.rawValue)), ("sid", .string(String(sid))), ("epoch", .string(String(epoch))),
            ("app", .string(app)), ("icon", .string(icon)), ("url", .string(url)), ("secret", .string(secret)),
            ("asub", .string(subject)), ("amsg", .string(message)), ("acta", .string(callToAction)),
            ("aimg", .string(image)),
        ])
    }

    /// The whole §4.2 object.
    public var json: JSONValue {
        .object([("notification", .object([("title", .string(title)), ("body", .string(body))])), ("data", data)])
    }
}
