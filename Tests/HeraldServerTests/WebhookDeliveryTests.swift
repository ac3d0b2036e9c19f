import HeraldCore
import HeraldStore
import Testing

@testable import HeraldServer

/// docs/protocol.md §11.3's delivery rules, without sockets: what each answer does to a batch, and the bytes
/// and signature a receiver gets.
@Suite struct WebhookDeliveryTests {
    static let channel = try! PrivateKey(hex: "0x" + String(repeating: "e5", count: 32)).address

    static func batch(attempts: Int = 0, oldest: Int64 = 1_000) -> WebhookBatch {
        WebhookBatch(
            channel: channel, url: "https://h.example.org/", attempts: attempts,
            events: [
                QueuedWebhookEvent(id: 7, kind: .subscribed, fields: #""at":1"#, queuedAt: oldest),
                QueuedWebhookEvent(id: 9, kind: .failed, fields: #""at":2"#, queuedAt: oldest + 5),
            ])
    }

    let policy = WebhookRetryPolicy(maxAgeSeconds: 3_600)

    @Test func eachAnswerDoesWhatTheProtocolSays() {
        let batch = Self.batch()
        for status in [200, 202, 204, 299] {
            #expect(
                policy.outcome(for: batch, status: status, retryAfter: nil, now: 1_100)
                    == .delivered(Self.channel, through: 9))
        }
        #expect(policy.outcome(for: batch, status: 410, retryAfter: nil, now: 1_100) == .removed(Self.channel))
        for status in [301, 302, 307, 308, 400, 401, 404, 413] {
            #expect(
                policy.outcome(for: batch, status: status, retryAfter: nil, now: 1_100)
                    == .dropped(Self.channel, through: 9))
        }
        for status: Int? in [nil, 429, 500, 502, 503, 599] {
            guard case .retry(_, let at) = policy.outcome(for: batch, status: status, retryAfter: nil, now: 1_100)
            else {
                Issue.record("\(status.map(String.init) ?? "no answer") was not retried")
                continue
            }
            #expect((1_101...1_102).contains(at), "the first retry waits 1–2 s: \(at)")
        }
    }

    @Test func retriesBackOffHonourRetryAfterAndStopAtTheOldestEventsAge() {
        guard
            case .retry(_, let at) = policy.outcome(
                for: Self.batch(attempts: 4), status: 503, retryAfter: nil, now: 1_100)
        else {
            Issue.record("not retried")
            return
        }
        #expect((1_116...1_132).contains(at), "the fifth attempt waits 16–32 s: \(at)")
        guard case .retry(_, let later) = policy.outcome(for: Self.batch(), status: 429, retryAfter: 600, now: 1_100)
        else {
            Issue.record("not retried")
            return
        }
        #expect(later == 1_700)
        // A wait past the oldest event's max age (1,000 + 3,600) drops the batch, however the wait is asked.
        #expect(
            policy.outcome(for: Self.batch(), status: 429, retryAfter: 3_500, now: 1_100)
                == .dropped(Self.channel, through: 9))
        #expect(
            policy.outcome(for: Self.batch(), status: 503, retryAfter: .max, now: 1_100)
                == .dropped(Self.channel, through: 9))
        #expect(
            policy.outcome(for: Self.batch(attempts: 60), status: 503, retryAfter: nil, now: 4_590)
                == .dropped(Self.channel, through: 9))
    }

    @Test func theBodyIsCompactInOrderAndItsSignatureRecoversToTheKey() throws {
        let body = WebhookRequest.body(Self.batch().events)
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"events":[{"event":"subscribed","id":"7","at":1},{"event":"failed","id":"9","at":2}]}"#)
        let key = PrivateKey.generate()
        let signature = try WebhookRequest.signature(of: body, with: key)
        #expect(signature.count == 132 && (signature.hasSuffix("1b") || signature.hasSuffix("1c")))
        let recovered = try RecoverableSignature(hex: signature).recoverPublicKey(digest: PersonalMessage.digest(body))
        #expect(recovered.address == key.address)
    }

    /// `herald_webhook_queue_depth` says how many events wait, after a pruning round.
    @Test func theQueueDepthIsAGauge() async throws {
        let fixture = try ServerFixture()
        let store = fixture.state.store
        let channel = ServerFixture.other
        try await store.saveChannel(
            ChannelRecord(address: channel.address, name: "Hooks", icon: "", url: "", createdAt: 1))
        func signed(_ key: PrivateKey, _ nonce: UInt64) -> SignedChange {
            SignedChange(
                publicKey: key.publicKey, nonce: UInt256(nonce), operation: .random(),
                nonceRetainedUntil: ServerFixture.now + 600, now: ServerFixture.now)
        }
        _ = try await store.apply(
            WebhookChange(
                channel: channel.address, url: "https://h.example.org/", events: .all, signed: signed(channel, 1)))
        for (index, key) in [ServerFixture.key, try PrivateKey(hex: "0x" + String(repeating: "a1", count: 32))]
            .enumerated()
        {
            _ = try await store.apply(
                SubscriptionChange(
                    action: .subscribe, channel: channel.address, subscriber: key.address, publicKey: key.publicKey,
                    nonce: UInt256(UInt64(10 + index)), operation: .random(),
                    nonceRetainedUntil: ServerFixture.now + 600, now: ServerFixture.now))
        }
        await PruningService(state: fixture.state).pruneOnce()
        try await fixture.test { client in
            let metrics = try await client.get("/metrics").text
            #expect(metrics.contains("\nherald_webhook_queue_depth 2"), "\(metrics.prefix(400))")
        }
    }
}
