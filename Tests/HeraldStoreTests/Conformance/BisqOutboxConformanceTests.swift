import HeraldCore
import HeraldStore
import Testing

/// Bisq relay pushes (docs/protocol.md §8) in the outbox: no binding and no feed item, the opaque message and its
/// flags kept as queued, claimed and recorded like any push, on every backend.
@Suite struct BisqOutboxConformanceTests {
    static let iosToken = String(repeating: "ab", count: 32)
    static let androidToken = "cEcb7vlj_SE:APA91bFYGqp_wsNv1OLHE3AeqUySkdUiNeuPv5yFmgGuOWqEMVycQrwPom8oq1iFNP"

    @Test(arguments: StoreBackend.available)
    func aBisqPushIsQueuedBoundWithItsMessageAndFlagsAndNoItem(_ backend: StoreBackend) async throws {
        try await backend.withStore { store throws in
            let urgent = BisqRelayContent(
                message: "BisqMessageiOS|0123456789abcdef|QUJD", urgent: true, mutableContent: false)
            let quiet = BisqRelayContent(message: "BisqMessageAndroid|x|y", urgent: false, mutableContent: true)
            let first = try await store.queueBisqPush(
                BisqRelayPush(platform: .ios, deviceToken: Self.iosToken, content: urgent, now: 1_000))
            let second = try await store.queueBisqPush(
                BisqRelayPush(platform: .android, deviceToken: Self.androidToken, content: quiet, now: 1_001))
            #expect(first != second)
            #expect(try await store.pushState(id: first) == PushState(status: "queued", attempts: 0, lastError: nil))

            let claimed = try await store.claimDuePushes(
                now: 1_001, limit: 10, platforms: nil, owner: "node", leaseUntil: 1_061)
            #expect(claimed.map(\.id) == [first, second])
            let ios = try #require(claimed.first)
            #expect(ios.bisq == urgent && ios.bound && ios.sid == nil && ios.notification == nil)
            #expect(ios.platform == .ios && ios.deviceToken == Self.iosToken && ios.queuedAt == 1_000)
            #expect(ios.apnsID.count == 16)
            #expect(claimed.last?.bisq == quiet)
            #expect(try await store.bindingCount() == 0)
        }
    }

    @Test(arguments: StoreBackend.available)
    func recordingAnAttemptShowsInItsState(_ backend: StoreBackend) async throws {
        try await backend.withStore { store throws in
            let content = BisqRelayContent(message: "m", urgent: false, mutableContent: false)
            let sent = try await store.queueBisqPush(
                BisqRelayPush(platform: .ios, deviceToken: Self.iosToken, content: content, now: 1_000))
            let dead = try await store.queueBisqPush(
                BisqRelayPush(platform: .iosSandbox, deviceToken: Self.iosToken, content: content, now: 1_000))
            let retried = try await store.queueBisqPush(
                BisqRelayPush(platform: .android, deviceToken: Self.androidToken, content: content, now: 1_000))
            try await store.record([
                PushAttemptResult(id: sent, disposition: .sent),
                PushAttemptResult(id: dead, disposition: .pruned, error: "APNs 410 Unregistered"),
                PushAttemptResult(id: retried, disposition: .retry(at: 1_010), error: "FCM 503"),
            ])
            #expect(try await store.pushState(id: sent) == PushState(status: "sent", attempts: 1, lastError: nil))
            #expect(
                try await store.pushState(id: dead)
                    == PushState(status: "pruned", attempts: 1, lastError: "APNs 410 Unregistered"))
            #expect(
                try await store.pushState(id: retried) == PushState(status: "queued", attempts: 1, lastError: "FCM 503")
            )
            #expect(try await store.pushState(id: 999_999) == nil)
            #expect(
                try await store.claimDuePushes(now: 1_009, limit: 10, platforms: nil, owner: "n", leaseUntil: 2_000)
                    .isEmpty)
            #expect(
                try await store.claimDuePushes(now: 1_010, limit: 10, platforms: nil, owner: "n", leaseUntil: 2_000)
                    .map(\.id) == [retried])
        }
    }
}
