import Foundation
import HeraldCore
public import Logging

/// FCM HTTP v1 (docs/protocol.md §4.3): `POST /v1/projects/<project>/messages:send` with an OAuth2 bearer token.
public struct FCMProvider: PushProvider {
    public let name = "fcm"
    let transport: any PushHTTPTransport
    let tokens: FCMAccessTokens
    let endpoint: String
    let projectID: String
    /// Unix seconds, for `android.ttl` (the seconds left until a push's deadline).
    let clock: @Sendable () -> Int64
    let logger: Logger

    public init(
        transport: any PushHTTPTransport, tokens: FCMAccessTokens, projectID: String,
        endpoint: String = "https://fcm.googleapis.com", clock: (@Sendable () -> Int64)? = nil, logger: Logger
    ) {
        self.transport = transport
        self.tokens = tokens
        self.projectID = projectID
        self.endpoint = endpoint.trimmingSuffix("/")
        self.clock = clock ?? { Int64(Date().timeIntervalSince1970) }
        self.logger = logger
    }

    public func deliver(_ message: PushMessage) async -> PushDelivery {
        let android = androidOptions(message)
        let body: [UInt8]
        switch message.content {
        case .notification(let content): body = content.fcmBody(token: message.deviceToken, android: android)
        case .bisq(let content): body = BisqPushBody.fcm(content, token: message.deviceToken, android: android)
        case .readSync(let content): body = content.fcmBody(token: message.deviceToken, android: android)
        }
        let token: String
        do { token = try await tokens.token() } catch {
            return .retryable(reason: "FCM token: \(String(describing: error).prefix(120))", retryAfter: nil)
        }
        let response: PushHTTPResponse
        do {
            response = try await transport.send(
                PushHTTPRequest(
                    url: "\(endpoint)/v1/projects/\(projectID)/messages:send",
                    headers: [("authorization", "Bearer " + token), ("content-type", "application/json")],
                    body: body))
        } catch {
            return .retryable(reason: "FCM unreachable: \(String(describing: error).prefix(120))", retryAfter: nil)
        }
        if response.status == 401 { await tokens.invalidate(token) }
        return Self.classify(response)
    }

    /// `android` (docs/protocol.md §4.3, §8, §11.4): `priority`; `ttl` as `"<n>s"`, n the whole seconds left
    /// until the deadline, only when the message gave a `ttl`; `collapse_key` when it has one.
    func androidOptions(_ message: PushMessage) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("priority", .string(message.priorityOrDefault.rawValue))]
        if message.timeToLive != nil {
            members.append(("ttl", .string("\(max(0, message.expiration - clock()))s")))
        }
        if let collapseID = message.collapseID { members.append(("collapse_key", .string(collapseID))) }
        return .object(members)
    }

    static func classify(_ response: PushHTTPResponse) -> PushDelivery {
        // Every push comes here: an accepted one has nothing more to read or describe.
        if response.status == 200 { return .sent }
        let json = try? JSONParser.parse(response.body)
        let status = json?["error"]?["status"]?.stringValue ?? ""
        var codes: [String] = []
        if case .array(let details)? = json?["error"]?["details"] {
            codes = details.compactMap { $0["errorCode"]?.stringValue }
        }
        let described =
            "FCM \(response.status)\(status.isEmpty ? "" : " " + status)\(codes.isEmpty ? "" : " " + codes.joined(separator: ","))"
        if codes.contains("UNREGISTERED") { return .deadToken(reason: described) }
        switch response.status {
        case 401, 429, 500...599: return .retryable(reason: described, retryAfter: response.retryAfter)
        default: return .failed(reason: described)
        }
    }
}
