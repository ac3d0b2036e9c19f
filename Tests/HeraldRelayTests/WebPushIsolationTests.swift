import Foundation
import HeraldCore
import Synchronization
import Testing

@testable import HeraldRelay

/// A transport whose sends hang until the test lets them go, counting those under way.
final class HangingTransport: WebPushTransport {
    private let waiting = Mutex<[CheckedContinuation<Void, Never>]>([])

    func send(_ request: PushHTTPRequest, to endpoint: WebPushEndpoint) async throws -> PushHTTPResponse {
        await withCheckedContinuation { continuation in waiting.withLock { $0.append(continuation) } }
        return PushHTTPResponse(status: 201)
    }

    var hanging: Int { waiting.withLock { $0.count } }

    func releaseAll() {
        let all = waiting.withLock { waiting in
            defer { waiting.removeAll() }
            return waiting
        }
        for continuation in all { continuation.resume() }
    }
}

/// docs/protocol.md §9: one push service, slow or hostile, holds only its own share of the Web Push
/// lane, and a name that takes long to resolve fails its lookup in time.
@Suite struct WebPushIsolationTests {
    static func push(to endpoint: String) -> PushMessage {
        let keys = WebPushProviderTests.subscription
        return RelayFixtures.push(
            platform: .webpush, token: endpoint,
            webPushSubscription: WebPushSubscription(storedEndpoint: endpoint, p256dh: keys.p256dh, auth: keys.auth))
    }

    @Test func aFullOriginDefersItsNextPushAndOtherOriginsStillSend() async throws {
        let transport = HangingTransport()
        let provider = WebPushProvider(
            transport: transport,
            tokens: VAPIDTokens(key: WebPushProviderTests.vapid, subject: "mailto:ops@example.org"),
            originConcurrency: 2, logger: .init(label: "test"))
        let slow = "https://tarpit.example/push/"
        let first = Task { await provider.deliver(Self.push(to: slow + "1")) }
        let second = Task { await provider.deliver(Self.push(to: slow + "2")) }
        while transport.hanging < 2 { try await Task.sleep(for: .milliseconds(5)) }

        // The origin's two slots are taken: the third is not sent, and costs the lane nothing.
        let third = await provider.deliver(Self.push(to: slow + "3"))
        #expect(third == .deferred(reason: "Web Push: 2 sends to https://tarpit.example already in flight"))
        #expect(transport.hanging == 2)
        // Another origin is not held up by it.
        let other = Task { await provider.deliver(Self.push(to: "https://push.example/x")) }
        while transport.hanging < 3 { try await Task.sleep(for: .milliseconds(5)) }

        transport.releaseAll()
        #expect(await [first.value, second.value, other.value] == [.sent, .sent, .sent])
        #expect(provider.gate.count("https://tarpit.example") == 0, "every slot given back")
        let again = Task { await provider.deliver(Self.push(to: slow + "3")) }
        while transport.hanging < 1 { try await Task.sleep(for: .milliseconds(5)) }
        transport.releaseAll()
        #expect(await again.value == .sent)
    }

    @Test func aLookupThatDoesNotAnswerInTimeFailsInTime() async throws {
        let resolver = SystemHostResolver(timeout: .milliseconds(300)) { _ in
            Thread.sleep(forTimeInterval: 30)
            return [[127, 0, 0, 1]]
        }
        // The stand-in would answer after 30 s, with an address: a failure saying so is the timeout's.
        let failure = await #expect(throws: SystemHostResolver.LookupFailure.self) {
            try await resolver.addresses(of: "slow.example", port: 443)
        }
        #expect(failure?.description == "cannot resolve slow.example: no answer within 0.3 seconds")
        let quick = SystemHostResolver(timeout: .seconds(5)) { _ in [[192, 0, 2, 7]] }
        #expect(try await quick.addresses(of: "quick.example", port: 443) == [[192, 0, 2, 7]])
    }
}
