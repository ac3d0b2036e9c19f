import Foundation
import HeraldCore
public import Logging

/// Web Push delivery (RFC 8030, 8291, 8292; docs/protocol.md §9): each push is encrypted for its
/// subscription's keys (read with the push's claim, so a re-registration's keys apply to the pushes
/// claimed after it), signed for with a VAPID JWT of the endpoint's origin, and POSTed to the endpoint
/// exactly as registered through a transport that connects only to addresses it checked.
public struct WebPushProvider: PushProvider {
    public let name = "webpush"
    let transport: any WebPushTransport
    let tokens: VAPIDTokens
    let clock: @Sendable () -> Int64
    let logger: Logger
    let gate: OriginGate

    public init(
        transport: any WebPushTransport, tokens: VAPIDTokens, originConcurrency: Int = 8,
        clock: (@Sendable () -> Int64)? = nil, logger: Logger
    ) {
        self.transport = transport
        gate = OriginGate(limit: originConcurrency)
        self.tokens = tokens
        self.clock = clock ?? { Int64(Date().timeIntervalSince1970) }
        self.logger = logger
    }

    public func deliver(_ message: PushMessage) async -> PushDelivery {
        let content: PushContent
        switch message.content {
        case .notification(let notification): content = notification
        case .bisq: return .failed(reason: "a Bisq push cannot go to Web Push")
        // §10 queues no read-sync push for a browser: it would show nothing.
        case .readSync: return .failed(reason: "a read-sync push cannot go to Web Push")
        }
        // The claim found no keys: the binding was removed before it, so nothing to encrypt for.
        guard let subscription = message.webPushSubscription else {
            return .failed(reason: "Web Push binding has no subscription keys")
        }
        guard let endpoint = WebPushEndpoint(subscription.endpoint) else {
            return .failed(reason: "Web Push endpoint is not a valid https URL")
        }
        let request: PushHTTPRequest
        do {
            let body = try WebPushCipher.encrypt(
                WebPushPlaintext.bytes(content), to: try subscription.publicKey(),
                authSecret: try subscription.authSecret())
            request = PushHTTPRequest(
                url: subscription.endpoint,
                headers: try headers(message, content: content, origin: endpoint.origin), body: body)
        } catch {
            return .failed(reason: "Web Push encryption failed: \(error)")
        }
        guard gate.enter(endpoint.origin) else {
            return .deferred(reason: "Web Push: \(gate.limit) sends to \(endpoint.origin) already in flight")
        }
        defer { gate.leave(endpoint.origin) }
        do {
            return classify(try await transport.send(request, to: endpoint))
        } catch let refusal as WebPushRefusal {
            logger.notice(
                "Web Push refused before sending",
                metadata: [
                    "endpoint": "\(WebPushEndpoint.logOrigin(subscription.endpoint))",
                    "reason": "\(refusal.description)",
                ])
            return .failed(reason: refusal.description)
        } catch {
            return .retryable(reason: "Web Push unreachable: \(String(describing: error).prefix(120))", retryAfter: nil)
        }
    }

    /// docs/protocol.md §9 and §11.4: `TTL` the whole seconds left until the deadline; `Urgency` the message's
    /// priority, or by type without one; `Topic` the collapse id, none without one.
    func headers(_ message: PushMessage, content: PushContent, origin: String) throws -> [(String, String)] {
        var headers = [
            ("content-encoding", "aes128gcm"), ("content-type", "application/octet-stream"),
            ("ttl", String(max(0, message.expiration - clock()))),
            ("urgency", message.priority?.rawValue ?? WebPushPlaintext.urgency(content)),
            ("authorization", try tokens.authorization(origin: origin)),
        ]
        if let topic = message.collapseID { headers.append(("topic", topic)) }
        return headers
    }

    /// docs/protocol.md §9: 200/201/202 sent; 404 and 410 dead; 429 and 5xx retried; everything else, 3xx
    /// included (never followed), fails without touching the binding.
    func classify(_ response: PushHTTPResponse) -> PushDelivery {
        var described: String { "Web Push \(response.status)" }
        switch response.status {
        case 200, 201, 202: return .sent
        case 404, 410: return .deadToken(reason: described)
        case 429, 500...599: return .retryable(reason: described, retryAfter: response.retryAfter)
        default: return .failed(reason: described)
        }
    }
}
