import Foundation
import HeraldCore
public import HeraldStore
public import Logging

/// FCM HTTP v1 (PROTOCOL §4.3): `POST /v1/projects/<project>/messages:send` with an OAuth2 bearer token.
public struct FCMProvider: PushProvider {
    public let name = "fcm"
    let transport: any PushHTTPTransport
    let tokens: FCMAccessTokens
    let endpoint: String
    let projectID: String
    let mode: PushContent.Mode
    let logger: Logger

    public init(
        transport: any PushHTTPTransport, tokens: FCMAccessTokens, projectID: String,
        endpoint: String = "https://fcm.googleapis.com", mode: PushContent.Mode = .full, logger: Logger
    ) {
        self.transport = transport
        self.tokens = tokens
        self.projectID = projectID
        self.endpoint = endpoint.trimmingSuffix("/")
        self.mode = mode
        self.logger = logger
    }

    public func deliver(_ push: QueuedPush) async -> PushDelivery {
        await deliver(
            PushMessage(
                platform: push.platform, deviceToken: push.deviceToken, id: push.apnsID, expiration: 0,
                content: PushContent.of(push, mode: mode), bisq: push.bisq))
    }

    public func deliver(_ message: PushMessage) async -> PushDelivery {
        let body =
            message.bisq.map { BisqPushBody.fcm($0, token: message.deviceToken) }
            ?? message.content.fcmBody(token: message.deviceToken)
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
