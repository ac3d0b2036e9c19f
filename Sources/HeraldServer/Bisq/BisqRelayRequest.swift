import HeraldCore
import HeraldStore
import Hummingbird

/// What Bisq asks the relay to push, read from either API (docs/protocol.md §8) and checked before anything is
/// queued. The message is opaque: only its size is looked at.
struct BisqRelayRequest {
    /// Bisq's own relay refuses longer messages; so does this one.
    static let maximumMessageBytes = 3_000

    let platform: Platform
    /// §1 normalised.
    let deviceToken: String
    let content: BisqRelayContent

    /// `GET /relay?isAndroid&isProduction&isContentAvailable&snd&token&msg[&mutableContent]`: `token` and
    /// `msg` are hex of UTF-8. Every fault is a ``BisqRelayFault`` line.
    init(legacyQuery parameters: Parameters) throws(BisqRelayFault) {
        func boolean(_ name: String, required: Bool = true) throws(BisqRelayFault) -> Bool {
            guard let text = parameters[Substring(name)] else {
                if required { throw BisqRelayFault("missing parameter \(name)") }
                return false
            }
            switch text.lowercased() {
            case "true": return true
            case "false": return false
            default: throw BisqRelayFault("\(name) must be true or false")
            }
        }
        func hexText(_ name: String) throws(BisqRelayFault) -> String {
            guard let hex = parameters[Substring(name)] else { throw BisqRelayFault("missing parameter \(name)") }
            guard let bytes = try? Hex.decode(hex), let text = String(validating: bytes, as: UTF8.self) else {
                throw BisqRelayFault("\(name) must be the hex of UTF-8 text")
            }
            // What hex decoding hands over no URI or JSON check saw: refused here, as there (U+0000 would
            // fail the database's insert with a 500 on PostgreSQL).
            guard !bytes.contains(0) else { throw BisqRelayFault("\(name) holds U+0000 (NUL), which is not accepted") }
            return text
        }
        let isAndroid = try boolean("isAndroid")
        let isProduction = try boolean("isProduction")
        // Checked as Bisq's relay checks it; APNs pushes always carry content-available (§8).
        _ = try boolean("isContentAvailable")
        let sound = try boolean("snd")
        let mutableContent = try boolean("mutableContent", required: false)
        let platform: Platform = isAndroid ? .android : isProduction ? .ios : .iosSandbox
        let token = try hexText("token")
        guard DeviceToken.isValid(token, for: platform) else {
            throw BisqRelayFault("token is not a valid \(isAndroid ? "FCM" : "APNs") device token")
        }
        let message = try hexText("msg")
        guard !message.isEmpty else { throw BisqRelayFault("msg is empty") }
        guard message.utf8.count <= Self.maximumMessageBytes else {
            throw BisqRelayFault("msg is longer than \(Self.maximumMessageBytes) bytes")
        }
        self.platform = platform
        self.deviceToken = DeviceToken.normalized(token, for: platform)
        self.content = BisqRelayContent(message: message, urgent: sound, mutableContent: mutableContent)
    }

    /// `POST /v1/apns|fcm/device/{token}` with `{"encrypted","isUrgent"?,"isMutableContent"?}`; faults are
    /// §3 errors. APNs pushes go to the production host.
    init(platform: Platform, token: String, body: some Collection<UInt8>) throws(APIError) {
        guard DeviceToken.isValid(token, for: platform) else {
            throw APIError(.invalidDeviceToken, "the path does not hold a valid \(platform.rawValue) device token")
        }
        let json: JSONValue
        do { json = try JSONParser.parse(body) } catch { throw APIError(.badRequest, error.reason) }
        guard json.objectMembers != nil else { throw APIError(.badRequest, "the body must be a JSON object") }
        guard let message = json["encrypted"]?.stringValue, !message.isEmpty else {
            throw APIError(.badRequest, "encrypted must be a non-empty string")
        }
        guard message.utf8.count <= Self.maximumMessageBytes else {
            throw APIError(.fieldTooLong, "encrypted is longer than \(Self.maximumMessageBytes) bytes")
        }
        func flag(_ name: String) throws(APIError) -> Bool {
            switch json[name] {
            case nil: return false
            case .bool(let value)?: return value
            default: throw APIError(.badRequest, "\(name) must be a boolean")
            }
        }
        self.platform = platform
        self.deviceToken = DeviceToken.normalized(token, for: platform)
        self.content = BisqRelayContent(
            message: message, urgent: try flag("isUrgent"), mutableContent: try flag("isMutableContent"))
    }
}
