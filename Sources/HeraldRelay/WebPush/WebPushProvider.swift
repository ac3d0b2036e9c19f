import Foundation
import HeraldCore
public import HeraldStore
public import Logging

/// Web Push delivery (RFC 8030, 8291, 8292; PROTOCOL §9): each push is encrypted for its
/// subscription's keys (read with the push's claim, so a re-registration's keys apply to the pushes
/// claimed after it), signed for with a VAPID JWT of the endpoint's origin, and POSTed to the endpoint
/// exactly as registered through a transport that connects only to addresses it checked.
public struct WebPushProvider: PushProvider {
    public let name = "webpush"
    let transport: any WebPushTransport
    let tokens: VAPIDTokens
    let mode: PushContent.Mode
    let maxAgeSeconds: Int64
    let clock: @Sendable () -> Int64
    let logger: Logger
    let gate: OriginGate

    public init(
        transport: any WebPushTransport, tokens: VAPIDTokens,
        mode: PushContent.Mode = .full, maxAgeSeconds: Int64 = 86_400, originConcurrency: Int = 8,
        clock: (@Sendable () -> Int64)? = nil, logger: Logger
    ) {
        self.transport = transport
        gate = OriginGate(limit: originConcurrency)
        self.tokens = tokens
        self.mode = mode
        self.maxAgeSeconds = maxAgeSeconds
        self.clock = clock ?? { Int64(Date().timeIntervalSince1970) }
        self.logger = logger
    }

    public func deliver(_ push: QueuedPush) async -> PushDelivery {
        // The claim found no keys: the binding was removed before it, so nothing to encrypt for.
        guard let subscription = push.webPushSubscription else {
            return .failed(reason: "Web Push binding has no subscription keys")
        }
        return await deliver(
            content: PushContent.of(push, mode: mode), to: subscription, expiration: push.queuedAt + maxAgeSeconds)
    }

    func deliver(content: PushContent, to subscription: WebPushSubscription, expiration: Int64) async -> PushDelivery {
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
                headers: [
                    ("content-encoding", "aes128gcm"), ("content-type", "application/octet-stream"),
                    ("ttl", String(max(0, expiration - clock()))), ("urgency", WebPushPlaintext.urgency(content)),
                    ("authorization", try tokens.authorization(origin: endpoint.origin)),
                ],
                body: body)
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

    /// PROTOCOL §9: 200/201/202 sent; 404 and 410 dead; 429 and 5xx retried; everything else, 3xx
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
