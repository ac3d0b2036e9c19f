public import HeraldCore

/// One notification as a recipient gets it (docs/protocol.md §4.2), the way the EPNS mobile cache stores it
/// (§6): type-2 items keep their encrypted secret and fields.
public struct FeedItem: Sendable, Hashable {
    public var sid: Int64
    public var type: Int
    public var app: String
    public var icon: String
    public var url: String
    public var secret: String
    public var subject: String
    public var message: String
    public var callToAction: String
    public var image: String
    /// Milliseconds.
    public var epoch: Int64
    /// The sending channel, when known: a feed entry names it (`sender`), a push does not.
    public var sender: EthereumAddress?

    public init(
        sid: Int64, type: Int, app: String, icon: String, url: String, secret: String, subject: String,
        message: String, callToAction: String, image: String, epoch: Int64, sender: EthereumAddress? = nil
    ) {
        self.sender = sender
        self.sid = sid
        self.type = type
        self.app = app
        self.icon = icon
        self.url = url
        self.secret = secret
        self.subject = subject
        self.message = message
        self.callToAction = callToAction
        self.image = image
        self.epoch = epoch
    }

    /// Reads a push as APNs or FCM delivers it, or the bare §4.2 object: `{"notification","data"}`,
    /// `{"aps": …, …data}` or `{"message": {"data": …}}`. Every `data` value must be a string.
    public static func parse(push json: JSONValue) throws(InboxError) -> FeedItem {
        let data: JSONValue
        if let inner = json["data"], inner.objectMembers != nil {
            data = inner
        } else if let message = json["message"], let inner = message["data"], inner.objectMembers != nil {
            data = inner
        } else if json["aps"] != nil, let members = json.objectMembers {
            data = .object(members.filter { $0.key != "aps" })
        } else {
            throw InboxError("not a Herald push: no data object")
        }
        func text(_ name: String, required: Bool = false) throws(InboxError) -> String {
            guard let value = data[name] else {
                if required { throw InboxError("the push has no data.\(name)") }
                return ""
            }
            guard let string = value.stringValue else { throw InboxError("data.\(name) must be a string") }
            return string
        }
        guard let type = Int(try text("type", required: true)), (1...4).contains(type) else {
            throw InboxError("data.type must be \"1\" to \"4\" (a setup confirmation is not a feed item)")
        }
        guard let sid = Int64(try text("sid", required: true)), sid >= 0 else {
            throw InboxError("data.sid must be digits")
        }
        guard let epoch = Int64(try text("epoch", required: true)), epoch >= 0 else {
            throw InboxError("data.epoch must be milliseconds")
        }
        let secret = try text("secret")
        if type == 2 && secret.isEmpty { throw InboxError("a type 2 item carries its secret") }
        return FeedItem(
            sid: sid, type: type, app: try text("app"), icon: try text("icon"), url: try text("url"), secret: secret,
            subject: try text("asub"), message: try text("amsg"), callToAction: try text("acta"),
            image: try text("aimg"),
            epoch: epoch)
    }

    /// A type-2 item's fields, decrypted in memory only: the ECIES secret with the wallet's key, then
    /// each non-empty field with CryptoJS AES.
    public func decrypted(with key: PrivateKey) throws(HeraldError) -> FeedItem {
        guard type == 2 else { return self }
        let passphrase = try ECIES.decryptText(secret, with: key)
        func open(_ field: String) throws(HeraldError) -> String {
            field.isEmpty ? "" : try CryptoJSAES.decrypt(field, passphrase: passphrase)
        }
        var plain = self
        plain.subject = try open(subject)
        plain.message = try open(message)
        plain.callToAction = try open(callToAction)
        plain.image = try open(image)
        return plain
    }
}

public struct InboxError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
