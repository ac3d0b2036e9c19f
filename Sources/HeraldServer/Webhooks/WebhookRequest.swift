import HeraldCore
import HeraldStore

/// What a webhook receives (docs/protocol.md §11.3): `{"events":[…]}` as compact UTF-8 JSON, oldest first,
/// signed with EIP-191 `personal_sign` of the raw body bytes by the server's webhook key.
enum WebhookRequest {
    static func body(_ events: [QueuedWebhookEvent]) -> [UInt8] {
        let items = events.map { WebhookEventPlanner.delivered(id: $0.id, kind: $0.kind, fields: $0.fields) }
        return Array(("{\"events\":[" + items.joined(separator: ",") + "]}").utf8)
    }

    /// `0x` + 65 bytes hex, `v` 27 or 28, low `s`: the `Herald-Signature` header.
    static func signature(of body: [UInt8], with key: PrivateKey) throws -> String {
        try key.sign(digest: PersonalMessage.digest(body)).hex
    }
}

/// Decides what a delivery's answer does to its batch (docs/protocol.md §11.3): 2xx delivered; 410 the
/// webhook removed; 429, 5xx, a network error or the timeout retried with §4.3's backoff, `Retry-After`
/// honoured, while the batch's oldest event is younger than the max age (a wait reaching past it drops
/// the batch); 3xx and any other answer drop the batch.
struct WebhookRetryPolicy {
    let maxAgeSeconds: Int64
    var baseSeconds = 1.0

    /// `status` nil: no answer (a network error, a refused address, the timeout).
    func outcome(for batch: WebhookBatch, status: Int?, retryAfter: Int64?, now: Int64) -> WebhookDeliveryOutcome {
        let through = batch.events.last?.id ?? 0
        switch status {
        case .some(200...299):
            return .delivered(batch.channel, through: through)
        case .some(410):
            return .removed(batch.channel)
        case nil, .some(429), .some(500...599):
            let made = batch.attempts + 1
            let backoff = min(300, baseSeconds * pow2(made - 1)) * (1 + Double.random(in: 0..<1))
            let at = now.addingSaturated(max(Int64(backoff.rounded(.up)), retryAfter ?? 0))
            let oldest = batch.events.first?.queuedAt ?? now
            guard at < oldest.addingSaturated(maxAgeSeconds) else { return .dropped(batch.channel, through: through) }
            return .retry(batch.channel, at: at)
        default:
            return .dropped(batch.channel, through: through)
        }
    }

    private func pow2(_ exponent: Int) -> Double {
        exponent >= 20 ? 1_048_576 : Double(1 << max(0, exponent))
    }
}
