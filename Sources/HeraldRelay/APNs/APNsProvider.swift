import Foundation
import HeraldCore
public import Logging

/// APNs provider API over HTTP/2 with token authentication (docs/protocol.md §4.3): `POST /3/device/<token>`
/// on the production host (`ios`) or the sandbox host (`ios-sandbox`).
public struct APNsProvider: PushProvider {
    public let name = "apns"
    let transport: any PushHTTPTransport
    let tokens: APNsTokenAuthority
    let topic: String
    let productionHost: String
    let sandboxHost: String
    let logger: Logger

    public init(
        transport: any PushHTTPTransport, tokens: APNsTokenAuthority, topic: String,
        productionHost: String = "https://api.push.apple.com",
        sandboxHost: String = "https://api.development.push.apple.com", logger: Logger
    ) {
        self.transport = transport
        self.tokens = tokens
        self.topic = topic
        self.productionHost = productionHost.trimmingSuffix("/")
        self.sandboxHost = sandboxHost.trimmingSuffix("/")
        self.logger = logger
    }

    /// Reasons that mean the token will never work again (docs/protocol.md §4.3); nothing else prunes.
    static let deadReasons: [Int: Set<String>] = [
        410: ["Unregistered", "ExpiredToken"], 400: ["BadDeviceToken", "DeviceTokenNotForTopic"],
    ]

    public func deliver(_ message: PushMessage) async -> PushDelivery {
        let body: [UInt8]
        switch message.content {
        // `badge` and `thread-id` belong to a notification's `aps`; a Bisq body is Bisq's own (§8).
        case .notification(let content): body = content.apnsBody(badge: message.badge, threadID: message.threadID)
        case .bisq(let content): body = BisqPushBody.apns(content)
        case .readSync(let content): body = content.apnsBody
        }
        do {
            let token = try await tokens.token()
            var response = try await transport.send(request(message, body: body, token: token))
            if response.status == 403, Self.reason(response) == "ExpiredProviderToken" {
                let renewed = try await tokens.renew(rejected: token)
                guard renewed != token else {
                    return .retryable(
                        reason: "APNs 403 ExpiredProviderToken", retryAfter: APNsTokenAuthority.minimumAge)
                }
                response = try await transport.send(request(message, body: body, token: renewed))
            }
            return classify(response)
        } catch let error as RelayConfigurationError {
            return .failed(reason: error.description)
        } catch {
            return .retryable(reason: "APNs unreachable: \(String(describing: error).prefix(120))", retryAfter: nil)
        }
    }

    func host(for platform: Platform) -> String { platform == .iosSandbox ? sandboxHost : productionHost }

    /// docs/protocol.md §4.3 and §11.4: `apns-priority` 10, or 5 for `normal`; `apns-expiration` the deadline,
    /// `0` for a message whose `ttl` is 0 (APNs then tries once and stores nothing); `apns-collapse-id`
    /// only when the message has one.
    func request(_ message: PushMessage, body: [UInt8], token: String) -> PushHTTPRequest {
        var headers = [
            ("authorization", "bearer " + token), ("apns-topic", topic), ("apns-push-type", message.pushType.rawValue),
            ("apns-priority", message.priorityOrDefault == .high ? "10" : "5"),
            ("apns-expiration", message.timeToLive == 0 ? "0" : String(message.expiration)),
            ("apns-id", Self.uuid(message.id)), ("content-type", "application/json"),
        ]
        if let collapseID = message.collapseID { headers.append(("apns-collapse-id", collapseID)) }
        return PushHTTPRequest(
            url: host(for: message.platform) + "/3/device/" + message.deviceToken, headers: headers, body: body)
    }

    func classify(_ response: PushHTTPResponse) -> PushDelivery {
        // Every push comes here: an accepted one has nothing more to read or describe.
        if response.status == 200 { return .sent }
        let reason = Self.reason(response) ?? ""
        let described = "APNs \(response.status)\(reason.isEmpty ? "" : " " + reason)"
        switch response.status {
        case let status where Self.deadReasons[status]?.contains(reason) == true:
            return .deadToken(reason: described)
        case 429, 500...599:
            return .retryable(reason: described, retryAfter: response.retryAfter)
        default:
            return .failed(reason: described)
        }
    }

    static func reason(_ response: PushHTTPResponse) -> String? {
        (try? JSONParser.parse(response.body))?["reason"]?.stringValue
    }

    private static let uuidDigits = Array("0123456789abcdef".utf8)

    /// The queued 16 random bytes as a version-4 UUID, the form `apns-id` takes.
    static func uuid(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for index in 0..<16 {
            var byte = index < bytes.count ? bytes[index] : 0
            if index == 6 { byte = (byte & 0x0f) | 0x40 }
            if index == 8 { byte = (byte & 0x3f) | 0x80 }
            // Built byte by byte (it is formatted for every push): groups of 8-4-4-4-12 hex digits.
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(uuidDigits[Int(byte >> 4)])
            text.append(uuidDigits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }
}
