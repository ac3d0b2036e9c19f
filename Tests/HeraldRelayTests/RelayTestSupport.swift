import Foundation
import HeraldCore
import HeraldRelay
import HeraldStore
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

enum RelayFixtures {
    static let wallet = try! EthereumAddress(parsing: "0x3f243FdacE01Cfd9719f7359c94BA11361f32471")
    static let iosToken = String(repeating: "ab", count: 32)

    static func notification(
        _ kind: NotificationPayload.Kind = .targeted, message: String = "Pay 0.1 ETH"
    ) -> DeliveredNotification {
        DeliveredNotification(
            kind: kind, sid: 42, epoch: 1_763_769_600_123,
            title: kind == .secret ? "Desk has sent you a secret message!" : "Trade accepted",
            body: kind == .secret ? "Open Herald to read it." : "Offer 17", app: "Desk",
            icon: "https://d.example/i.png",
            url: "https://d.example", secret: kind == .secret ? "00aa" : "", subject: "Offer 17", message: message,
            callToAction: "", image: "")
    }

    static func push(
        platform: Platform = .ios, token: String = iosToken, notification: DeliveredNotification? = notification(),
        webPushSubscription: WebPushSubscription? = nil
    ) -> QueuedPush {
        QueuedPush(
            id: 7, sid: notification?.sid, wallet: wallet, platform: platform, deviceToken: token,
            apnsID: Array(0..<16), queuedAt: 1_763_769_600, attempts: 0, notification: notification,
            webPushSubscription: webPushSubscription)
    }

    static func json(_ bytes: [UInt8]) -> JSONValue? { try? JSONParser.parse(bytes) }
}
