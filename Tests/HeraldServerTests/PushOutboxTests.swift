import Foundation
import HTTPTypes
import HeraldCore
import HeraldRelay
import HeraldStore
import HummingbirdTesting
import Logging
import Synchronization
import Testing

@testable import HeraldServer

/// A provider that records what it was handed and answers from a script.
/// A provider whose first send takes `firstSendTakes`, the others none.
final class SlowFirstProvider: PushProvider {
    let name = "slow-first"
    let firstSendTakes: Duration
    private let received = Mutex<Int>(0)

    init(firstSendTakes: Duration) { self.firstSendTakes = firstSendTakes }

    func deliver(_ message: PushMessage) async -> PushDelivery {
        let first = received.withLock { count in
            count += 1
            return count == 1
        }
        if first { try? await Task.sleep(for: firstSendTakes) }
        return .sent
    }

    var sends: Int { received.withLock { $0 } }
}

final class RecordingProvider: PushProvider {
    let name = "recording"
    private let answers: Mutex<[PushDelivery]>
    private let received = Mutex<[PushMessage]>([])

    init(answers: [PushDelivery] = []) { self.answers = Mutex(answers) }

    func deliver(_ message: PushMessage) async -> PushDelivery {
        received.withLock { $0.append(message) }
        return answers.withLock { $0.isEmpty ? .sent : $0.removeFirst() }
    }

    var pushes: [PushMessage] { received.withLock { $0 } }
}

extension PushMessage {
    /// A value of the §4.2 `data` it carries.
    func data(_ key: String) -> String? { notification?.data.first { $0.key == key }?.value }
}

@Suite struct PushOutboxTests {
    typealias F = ServerFixture
    typealias N = NotificationRouteTests

    /// Sends one type-3 message to the registered subscriber, bound with `tokens` (one push each), then
    /// runs `body` with the fixture. Setup confirmations are off unless asked for, so that the message's
    /// pushes are the only ones; `configure` changes the rest of the settings.
    func withQueuedPush(
        setupConfirmation: Bool = false, tokens: [String] = [F.iosToken],
        configure: @escaping (inout HeraldSettings) -> Void = { _ in },
        _ body: @Sendable @escaping (ServerState) async throws -> Void
    ) async throws {
        let fixture = try F {
            $0.push.setupConfirmation = setupConfirmation
            configure(&$0)
        }
        try await fixture.state.store.saveChannel(
            ChannelRecord(address: N.channelKey.address, name: "Trades", icon: "", url: "", createdAt: 1))
        try await fixture.test { client in
            #expect(
                try await client.post(
                    try SubscriptionRouteTests.signed(SubscriptionRouteTests.subscription(nonce: 1)),
                    uri: "/v1/subscriptions"
                ).status == .ok)
            for (index, token) in tokens.enumerated() {
                #expect(
                    try await client.post(try F.signed(F.binding(token: token, nonce: UInt64(2 + index)))).status
                        == .ok)
            }
            let sent = try await client.post(
                try N.notification(N.draft.targetedPayload(to: [F.key.address]), nonce: UInt64(2 + tokens.count)),
                uri: "/v1/notifications")
            #expect(sent.json?["pushes"] == .number(String(tokens.count)))
            try await body(fixture.state)
        }
    }

    @Test func aQueuedPushIsDeliveredOnceWithItsContent() async throws {
        try await withQueuedPush { state async throws in
            let provider = RecordingProvider()
            let service = PushOutboxService(
                state: state, providers: PushProviders(apns: provider, logger: Logger(label: "test")))
            #expect(try await state.store.pushCounts()["queued"] == 1)
            #expect(try await service.drainOnce() == 1)
            #expect(try await service.drainOnce() == 0)
            let push = try #require(provider.pushes.first)
            #expect(provider.pushes.count == 1)
            #expect(push.platform == .ios && push.deviceToken == F.iosToken)
            #expect(push.id.count == 16)
            #expect(push.data("amsg") == N.draft.message)
            #expect(push.data("type") == "3")
            #expect(try await state.store.pushCounts() == ["sent": 1])
        }
    }

    /// Outcomes are counted per provider and status, and every send's latency is recorded, however a
    /// round groups them.
    @Test func eachOutcomeIsCountedAndEachSendTimed() async throws {
        try await withQueuedPush(setupConfirmation: true) { state async throws in
            let provider = RecordingProvider(answers: [.sent, .failed(reason: "refused")])
            let service = PushOutboxService(
                state: state, providers: PushProviders(apns: provider, logger: Logger(label: "test")))
            #expect(try await service.drainOnce() == 2)
            let metrics = String(decoding: state.metrics.render(), as: UTF8.self)
            let lines = Set(metrics.split(separator: "\n").map(String.init))
            #expect(lines.contains(#"herald_pushes_total{provider="recording",status="sent"} 1"#), "\(metrics)")
            #expect(lines.contains(#"herald_pushes_total{provider="recording",status="failed"} 1"#))
            #expect(lines.contains(#"herald_push_duration_seconds_count{provider="recording"} 2"#))
        }
    }

    /// A push claimed ahead waits for a send slot only while its lease still covers a whole send: with a
    /// 12 s lease (sends bounded by 9 s) 2 s. One send slot, two pushes, the first send taking 2.5 s: the
    /// second is handed back unsent, deferred (not an attempt) and no longer claimed.
    @Test func aPushHeldPastItsLeasesRoomIsHandedBackUnsent() async throws {
        let tokens = [F.iosToken, String(repeating: "b", count: 64)]
        try await withQueuedPush(
            tokens: tokens,
            configure: {
                $0.push.leaseSeconds = 12
                $0.push.concurrency = 1
            }
        ) { state async throws in
            let provider = SlowFirstProvider(firstSendTakes: .milliseconds(2_500))
            let service = PushOutboxService(
                state: state, providers: PushProviders(apns: provider, logger: Logger(label: "test")))
            let running = Task { try await service.run() }
            // The held push is handed back once the first send ends (2.5 s) and its outcome is committed.
            var counts: [String: Int] = [:]
            for _ in 0..<100 {
                counts = try await state.store.pushCounts()
                if counts == ["sent": 1, "queued": 1] && provider.sends == 1 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            running.cancel()
            _ = try? await running.value
            #expect(counts == ["sent": 1, "queued": 1])
            #expect(provider.sends == 1, "the held push was not sent")
            // Queued again, due in a second or two (the fixture's clock stands still), not an attempt.
            let due = try await #require(state.store as? any OutboxInspection).duePushes(now: F.now + 10, limit: 10)
            #expect(due.count == 1)
            #expect(due.first?.attempts == 0)
            let metrics = String(decoding: state.metrics.render(), as: UTF8.self)
            #expect(metrics.contains(#"herald_pushes_total{provider="slow-first",status="deferred"} 1"#), "\(metrics)")
        }
    }

    @Test func withoutAProviderTheLoggingOneDrainsAndFails() async throws {
        try await withQueuedPush { state async throws in
            let service = PushOutboxService(state: state, providers: PushProviders(logger: Logger(label: "test")))
            #expect(try await service.drainOnce() == 1)
            #expect(try await state.store.pushCounts() == ["failed": 1])
        }
    }

    @Test func retryableAnswersWaitAndGiveUpAfterTheAttempts() async throws {
        try await withQueuedPush { state async throws in
            let provider = RecordingProvider(answers: [.retryable(reason: "HTTP 503", retryAfter: 5000)])
            let service = PushOutboxService(
                state: state, providers: PushProviders(apns: provider, logger: Logger(label: "test")))
            #expect(try await service.drainOnce() == 1)
            // Not due yet: Retry-After pushed it past the fixed clock.
            #expect(try await service.drainOnce() == 0)
            #expect(try await state.store.pushCounts() == ["queued": 1])
            let due = try await #require(state.store as? any OutboxInspection).duePushes(now: F.now + 6000, limit: 10)
            #expect(due.first?.attempts == 1)
        }
    }

    @Test func theRetryPolicyBacksOffHonoursRetryAfterAndStops() {
        let policy = PushRetryPolicy(attempts: 3, maxAgeSeconds: 100)
        func push(attempts: Int) -> QueuedPush {
            QueuedPush(
                id: 1, sid: 1, wallet: F.key.address, platform: .ios, deviceToken: F.iosToken, apnsID: [],
                queuedAt: 0, attempts: attempts, notification: nil)
        }
        let busy = PushDelivery.retryable(reason: "HTTP 503", retryAfter: nil)
        for _ in 0..<20 {
            guard case .retry(let at) = policy.result(for: push(attempts: 0), busy, now: 10).disposition else {
                Issue.record("a first 503 is retried")
                return
            }
            #expect((11...12).contains(at), "base 1 s × (1 + jitter), rounded up")
            guard case .retry(let later) = policy.result(for: push(attempts: 1), busy, now: 10).disposition else {
                Issue.record("a second 503 is retried")
                return
            }
            #expect((12...14).contains(later), "2 s × (1 + jitter)")
        }
        let told = policy.result(for: push(attempts: 0), .retryable(reason: "429", retryAfter: 50), now: 10)
        #expect(told.disposition == .retry(at: 60))
        #expect(policy.result(for: push(attempts: 2), busy, now: 10).disposition == .failed)
        #expect(policy.result(for: push(attempts: 0), busy, now: 99).disposition == .failed, "past the maximum age")
        #expect(policy.result(for: push(attempts: 0), .failed(reason: "400"), now: 10).disposition == .failed)
        #expect(policy.result(for: push(attempts: 0), .sent, now: 10).disposition == .sent)
    }

    /// docs/protocol.md §4.3: a wait that ends past the push's deadline fails it at once, whatever its size
    /// (the sum with `Int64.max` once trapped and took the server down); a wait within it is honoured.
    @Test func aRetryAfterPastTheDeadlineFailsThePushAtOnceAndNoSumTraps() {
        let policy = PushRetryPolicy(attempts: 8, maxAgeSeconds: 86_400)
        let push = QueuedPush(
            id: 1, sid: 1, wallet: F.key.address, platform: .webpush, deviceToken: "https://push.example/x",
            apnsID: [], queuedAt: 1_000, attempts: 0, notification: nil)
        for wait in [Int64.max, RemoteNumber.secondsCeiling, 86_400] {
            let result = policy.result(for: push, .retryable(reason: "Web Push 429", retryAfter: wait), now: 1_010)
            #expect(result.disposition == .failed, "\(wait)")
            #expect(result.error?.contains("past the push's deadline") == true)
        }
        let within = policy.result(for: push, .retryable(reason: "429", retryAfter: 86_390), now: 1_010)
        #expect(within.disposition == .retry(at: 87_400))
        // A push deferred (its origin full) comes back in a second or two, without an attempt counted,
        // until its deadline.
        let deferred = policy.result(for: push, .deferred(reason: "origin full"), now: 1_010)
        #expect([.deferred(until: 1_011), .deferred(until: 1_012)].contains(deferred.disposition))
        #expect(!deferred.isAttempt)
        #expect(policy.result(for: push, .deferred(reason: "origin full"), now: 87_400).disposition == .failed)
        // A deadline at the end of time saturates rather than trapping.
        let endless = PushRetryPolicy(attempts: 8, maxAgeSeconds: .max)
        let late = endless.result(for: push, .retryable(reason: "429", retryAfter: .max), now: .max - 1)
        #expect(late.disposition == .retry(at: .max))
    }

    @Test func aDeadTokenRemovesEveryBindingOfItAndItsOtherPushesAreDropped() async throws {
        try await withQueuedPush { state async throws in
            // The same device token bound to a second wallet, with a push of its own queued.
            let other = N.stranger
            _ = try await state.store.apply(
                DeviceChange(
                    action: .register, wallet: other.address, platform: .ios, deviceToken: F.iosToken,
                    publicKey: other.publicKey, nonce: UInt256(77), operation: .random(),
                    nonceRetainedUntil: F.now + 600, now: F.now,
                    maxBindingsPerWallet: 20, queueSetupConfirmation: true))
            let provider = RecordingProvider(answers: [.deadToken(reason: "APNs 410 Unregistered")])
            let service = PushOutboxService(
                state: state, providers: PushProviders(apns: provider, logger: Logger(label: "test")), batchSize: 1)
            #expect(try await service.drainOnce() == 1)
            #expect(try await state.store.bindings(of: F.key.address).isEmpty)
            #expect(try await state.store.bindings(of: other.address).isEmpty, "every wallet's binding of the token")
            // The other wallet's queued push is dropped unsent: its binding is gone.
            #expect(try await service.drainOnce() == 1)
            #expect(provider.pushes.count == 1)
            #expect(try await state.store.pushCounts() == ["pruned": 2])
        }
    }

    @Test func aNewBindingQueuesOneSetupConfirmationARefreshNone() async throws {
        try await withQueuedPush(setupConfirmation: true) { state async throws in
            let provider = RecordingProvider()
            let service = PushOutboxService(
                state: state, providers: PushProviders(apns: provider, logger: Logger(label: "test")))
            #expect(try await service.drainOnce() == 2)
            let setup = try #require(provider.pushes.first { $0.data("type") == "setup" })
            #expect(setup.data("sid") == "" && setup.deviceToken == F.iosToken)
            #expect(setup.notification?.body == "Notifications are on for this device.")
            // A refresh of the same binding queues nothing.
            let refresh = DeviceChange(
                action: .register, wallet: F.key.address, platform: .ios, deviceToken: F.iosToken,
                publicKey: F.key.publicKey, nonce: UInt256(90), operation: .random(), nonceRetainedUntil: F.now + 600,
                now: F.now,
                maxBindingsPerWallet: 20, queueSetupConfirmation: true)
            #expect(try await state.store.apply(refresh) == .registered(created: false))
            #expect(try await state.store.queuedPushCount() == 0)
        }
    }

    @Test func theSendingChannelReadsEachPushsStatus() async throws {
        let fixture = try F { $0.push.setupConfirmation = false }
        try await fixture.state.store.saveChannel(
            ChannelRecord(address: N.channelKey.address, name: "Trades", icon: "", url: "", createdAt: 1))
        try await fixture.test { client async throws in
            let subscribe = try SubscriptionRouteTests.signed(SubscriptionRouteTests.subscription(nonce: 1))
            #expect(try await client.post(subscribe, uri: "/v1/subscriptions").status == .ok)
            #expect(try await client.post(try F.signed(F.binding(nonce: 2))).status == .ok)
            let sent = try await client.post(
                try N.notification(N.draft.targetedPayload(to: [F.key.address]), nonce: 3), uri: "/v1/notifications")
            let sid = try #require(
                sent.json?["sid"].flatMap { value -> String? in
                    guard case .array(let items) = value else { return nil }
                    return items.first?.stringValue
                })
            func status(_ path: String, as key: PrivateKey?) async throws -> TestResponse {
                var headers: HTTPFields = [:]
                if let key {
                    headers[.authorization] = try SubscriptionRouteTests.feedAccess(wallet: key.address, by: key)
                }
                return try await client.execute(uri: path, method: .get, headers: headers)
            }
            let queued = try await status("/v1/notifications/\(sid)", as: N.channelKey)
            #expect(queued.status == .ok, "\(queued.text)")
            #expect(queued.json?["recipient"] == .string(F.key.address.checksummed))
            #expect(queued.json?["pushes"]?[0]?["status"] == .string("queued"))

            let provider = RecordingProvider(answers: [.retryable(reason: "APNs 503", retryAfter: 60)])
            let service = PushOutboxService(
                state: fixture.state, providers: PushProviders(apns: provider, logger: Logger(label: "test")))
            try await service.drainOnce()
            let retried = try await status("/v1/notifications/\(sid)", as: N.channelKey)
            let push = try #require(retried.json?["pushes"]?[0])
            #expect(push["platform"] == .string("ios") && push["status"] == .string("queued"))
            #expect(push["attempts"] == .number("1") && push["lastError"] == .string("APNs 503"))

            #expect(try await status("/v1/notifications/\(sid)", as: F.key).errorCode == "not_found", "not the sender")
            #expect(try await status("/v1/notifications/999", as: N.channelKey).errorCode == "not_found")
            #expect(try await status("/v1/notifications/x1", as: N.channelKey).errorCode == "bad_request")
            // Digits are a well-formed sid (as the OpenAPI pattern says): one that cannot exist is not found,
            // and leading zeros name the same item (found by schemathesis: 000000 was a 400).
            for impossible in ["0", "000000", "99999999999999999999999"] {
                #expect(
                    try await status("/v1/notifications/\(impossible)", as: N.channelKey).errorCode == "not_found",
                    "\(impossible)")
            }
            #expect(try await status("/v1/notifications/00\(sid)", as: N.channelKey).status == .ok)
            #expect(try await status("/v1/notifications/\(sid)", as: nil).errorCode == "unauthorized")
        }
    }
}

extension JSONValue {
    /// An array element, for reading answers in tests.
    subscript(index: Int) -> JSONValue? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }
}
