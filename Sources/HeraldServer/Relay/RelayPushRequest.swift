import Foundation
import HeraldCore
import HeraldRelay

/// One push of a `POST /v1/relay/pushes` body (docs/protocol.md §7), checked: never stored, never logged.
struct RelayPush: Sendable {
    let id: String
    let message: PushMessage
    let expiresAt: Int64

    static let maximumPushes = 100

    /// Whether it is still sent: before its `expiresAt`, or, with `ttl` 0, once however late (§7, §11.4).
    func isLive(at now: Int64) -> Bool { expiresAt > now || message.timeToLive == 0 }

    /// The whole request's pushes; the first fault refuses the whole request with its §3 code.
    static func parse(_ body: some Collection<UInt8>, mode: PushContent.Mode) throws -> [RelayPush] {
        let json: JSONValue
        do { json = try JSONParser.parse(body) } catch {
            throw APIError(.badRequest, "the body is not valid JSON")
        }
        guard case .array(let items)? = json["pushes"] else {
            throw APIError(.badRequest, "the body must be {\"pushes\": [...]}")
        }
        guard (1...maximumPushes).contains(items.count) else {
            throw APIError(.badRequest, "pushes holds 1 to \(maximumPushes) pushes, not \(items.count)")
        }
        return try items.enumerated().map { index, item in try parse(item, at: index, mode: mode) }
    }

    private static func parse(_ item: JSONValue, at index: Int, mode: PushContent.Mode) throws -> RelayPush {
        let at = "pushes[\(index)]"
        guard case .string(let id)? = item["id"], let uuid = UUID(uuidString: id) else {
            throw APIError(.badRequest, "\(at).id must be a UUID")
        }
        guard case .string(let platformName)? = item["platform"], let platform = Platform(rawValue: platformName),
            platform != .webpush
        else {
            throw APIError(.invalidPlatform, "\(at).platform must be ios, ios-sandbox or android")
        }
        guard case .string(let token)? = item["deviceToken"], DeviceToken.isValid(token, for: platform) else {
            throw APIError(.invalidDeviceToken, "\(at).deviceToken is not a \(platform.rawValue) device token")
        }
        guard case .number(let expiry)? = item["expiresAt"], let expiresAt = Int64(expiry), expiresAt >= 0 else {
            throw APIError(.badRequest, "\(at).expiresAt must be Unix seconds")
        }
        guard let payload = item["payload"] else { throw APIError(.invalidPayload, "\(at).payload is missing") }
        let idBytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        if let kind = item["kind"] {
            // §10's read-sync push: its own bodies and headers; `push.content` does not apply to it.
            guard kind == .string("read") else { throw APIError(.invalidPayload, "\(at).kind must be \"read\"") }
            guard let content = ReadSyncContent(relayed: payload) else {
                throw APIError(
                    .invalidPayload, "\(at).payload of a read push is {\"unread\": \"N\", \"epoch\": \"ms\"}")
            }
            return RelayPush(
                id: id,
                message: PushMessage(
                    platform: platform, deviceToken: DeviceToken.normalized(token, for: platform), id: idBytes,
                    expiration: expiresAt, content: .readSync(content), priority: .normal,
                    collapseID: platform.isApple ? ReadSyncContent.apnsCollapseID : nil),
                expiresAt: expiresAt)
        }
        let content: PushContent
        do { content = try PushContent.relayed(payload, mode: mode) } catch {
            throw APIError(.invalidPayload, "\(at).\(error.description)")
        }
        let options = try RelayPushOptions(item, at: at)
        // Under this server's `push.content = none` nothing of the message reaches Apple or Google, not
        // even what it groups or collapses by (§11.4).
        let quiet = mode == .none
        return RelayPush(
            id: id,
            message: PushMessage(
                platform: platform, deviceToken: DeviceToken.normalized(token, for: platform), id: idBytes,
                expiration: expiresAt, content: .notification(content), priority: options.priority,
                collapseID: quiet ? nil : options.collapseID, timeToLive: options.timeToLive, badge: options.badge,
                threadID: quiet ? nil : options.threadID),
            expiresAt: expiresAt)
    }
}

/// One push's answer, in request order.
struct RelayPushResult: Sendable {
    enum Status: String, Sendable {
        case sent, dead, retry, failed
    }
    let id: String
    let status: Status
    let reason: String?
    let retryAfter: Int?

    init(id: String, _ delivery: PushDelivery) {
        self.id = id
        switch delivery {
        case .sent: (status, reason, retryAfter) = (.sent, nil, nil)
        case .deadToken(let why): (status, reason, retryAfter) = (.dead, why, nil)
        case .retryable(let why, let after): (status, reason, retryAfter) = (.retry, why, after.map { Int($0) })
        case .deferred(let why): (status, reason, retryAfter) = (.retry, why, 1)
        case .failed(let why): (status, reason, retryAfter) = (.failed, why, nil)
        }
    }

    init(id: String, status: Status, reason: String, retryAfter: Int? = nil) {
        self.id = id
        self.status = status
        self.reason = reason
        self.retryAfter = retryAfter
    }

    var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("id", .string(id)), ("status", .string(status.rawValue))]
        if let reason { members.append(("reason", .string(reason))) }
        if let retryAfter { members.append(("retryAfter", .number(String(retryAfter)))) }
        return .object(members)
    }
}
