import Crypto

/// What a Bisq desktop tells a phone (docs/protocol.md §8): the JSON object inside an encrypted Bisq push.
public struct BisqMessage: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case setupConfirmation = "SETUP_CONFIRMATION"
        case erase = "ERASE"
        case trade = "TRADE"
        case dispute = "DISPUTE"
        case offer = "OFFER"
        case price = "PRICE"
        case market = "MARKET"
        case financial = "FINANCIAL"

        /// The kinds a phone shows to its user and keeps (the other two manage the pairing).
        public var isUserFacing: Bool { self != .setupConfirmation && self != .erase }
    }

    /// Milliseconds since 1970, set by the desktop.
    public var sentDate: Int64
    public var txId: String
    public var title: String
    public var message: String
    public var type: Kind
    public var actionRequired: String
    public var version: Int

    public init(
        sentDate: Int64, txId: String = "", title: String = "", message: String = "", type: Kind,
        actionRequired: String = "", version: Int = 1
    ) {
        self.sentDate = sentDate
        self.txId = txId
        self.title = title
        self.message = message
        self.type = type
        self.actionRequired = actionRequired
        self.version = version
    }

    /// The object in Bisq's member order: `sentDate, txId, title, message, type, actionRequired, version`.
    public var jsonValue: JSONValue {
        .object([
            (key: "sentDate", value: .number(String(sentDate))),
            (key: "txId", value: .string(txId)),
            (key: "title", value: .string(title)),
            (key: "message", value: .string(message)),
            (key: "type", value: .string(type.rawValue)),
            (key: "actionRequired", value: .string(actionRequired)),
            (key: "version", value: .number(String(version))),
        ])
    }

    /// SHA-256 hex of ``jsonValue``'s text: the same message, however often it is encrypted and sent.
    public var digest: String { Hex.encode(SHA256.hash(data: jsonValue.jsonBytes)) }

    /// Reads the object a phone decrypted. Text members a desktop left out read as empty; `sentDate`, `type`
    /// and `version` are required.
    public init(json: JSONValue) throws(HeraldError) {
        guard json.objectMembers != nil else { throw Self.invalid("the message is not a JSON object") }
        guard case .number(let dateText)? = json["sentDate"], let sentDate = Int64(dateText) else {
            throw Self.invalid("sentDate is not an integer")
        }
        guard let typeText = json["type"]?.stringValue, let type = Kind(rawValue: typeText) else {
            throw Self.invalid("type is not one of Bisq's message types")
        }
        guard case .number(let versionText)? = json["version"], let version = Int(versionText) else {
            throw Self.invalid("version is not an integer")
        }
        func text(_ key: String) throws(HeraldError) -> String {
            switch json[key] {
            case nil, .null?: return ""
            case .string(let value)?: return value
            default: throw Self.invalid("\(key) is not a string")
            }
        }
        self.init(
            sentDate: sentDate, txId: try text("txId"), title: try text("title"), message: try text("message"),
            type: type, actionRequired: try text("actionRequired"), version: version)
    }

    static func invalid(_ reason: String) -> HeraldError {
        HeraldError(.invalidBisqMessage, "invalid Bisq message: \(reason)")
    }
}
