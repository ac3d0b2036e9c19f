import Foundation
import HeraldCore
import HeraldRelay
import Synchronization

/// A transport that records every request and answers from a closure: providers tested without sockets.
final class ScriptedTransport: PushHTTPTransport {
    private let answer: @Sendable (PushHTTPRequest) throws -> PushHTTPResponse
    private let log = Mutex<[PushHTTPRequest]>([])

    init(_ answer: @escaping @Sendable (PushHTTPRequest) throws -> PushHTTPResponse) { self.answer = answer }

    func send(_ request: PushHTTPRequest) async throws -> PushHTTPResponse {
        log.withLock { $0.append(request) }
        return try answer(request)
    }

    var requests: [PushHTTPRequest] { log.withLock { $0 } }
}

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let now: Mutex<Int64>
    init(_ start: Int64) { now = Mutex(start) }
    func advance(_ seconds: Int64) { now.withLock { $0 += seconds } }
    var read: @Sendable () -> Int64 { { [self] in now.withLock { $0 } } }
}

/// Pushes as the server hands them over: the relay sends what it is given, so the content is spelt out
/// here (the server's mapping of outbox rows has its own tests).
enum RelayFixtures {
    static let iosToken = String(repeating: "ab", count: 32)
    static let queuedAt: Int64 = 1_763_769_600
    /// An hour after `queuedAt`.
    static let deadline: Int64 = queuedAt + 3600

    /// A feed item's §4.2 content for item 42 (type 3 unless `kind` says otherwise), its data in full.
    static func content(_ kind: NotificationPayload.Kind = .targeted, message: String = "Pay 0.1 ETH") -> PushContent {
        let secret = kind == .secret
        let minimal = [
            (key: "type", value: kind.rawValue), (key: "sid", value: "42"), (key: "epoch", value: "1763769600123"),
        ]
        let rest = [
            (key: "app", value: "Desk"), (key: "icon", value: "https://d.example/i.png"),
            (key: "url", value: "https://d.example"), (key: "secret", value: secret ? "00aa" : ""),
            (key: "asub", value: "Offer 17"), (key: "amsg", value: message), (key: "acta", value: ""),
            (key: "aimg", value: ""),
        ]
        return PushContent(
            title: secret ? "Desk has sent you a secret message!" : "Trade accepted",
            body: secret ? "Open Herald to read it." : "Offer 17", data: minimal + rest, minimalData: minimal)
    }

    /// The setup confirmation queued at `queuedAt`.
    static let setup: PushContent = {
        let data = [(key: "type", value: "setup"), (key: "sid", value: ""), (key: "epoch", value: "1763769600000")]
        return PushContent(title: PushContent.setupTitle, body: PushContent.setupBody, data: data, minimalData: data)
    }()

    static func push(
        platform: Platform = .ios, token: String = iosToken, content: PushMessage.Content = .notification(content()),
        id: [UInt8] = Array(0..<16), expiration: Int64 = deadline, priority: PushMessage.Priority? = nil,
        pushType: PushMessage.PushType = .alert, collapseID: String? = nil, timeToLive: Int64? = nil,
        badge: Int? = nil, threadID: String? = nil, webPushSubscription: WebPushSubscription? = nil
    ) -> PushMessage {
        PushMessage(
            platform: platform, deviceToken: token, id: id, expiration: expiration, content: content,
            priority: priority, pushType: pushType, collapseID: collapseID, timeToLive: timeToLive, badge: badge,
            threadID: threadID, webPushSubscription: webPushSubscription)
    }

    static func json(_ bytes: [UInt8]) -> JSONValue? { try? JSONParser.parse(bytes) }
}
