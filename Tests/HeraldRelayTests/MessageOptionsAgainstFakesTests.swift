import Foundation
import HeraldCore
import HeraldRelay
import HeraldTesting
import Logging
import Testing

/// A message's options (docs/protocol.md §11.4) through the real providers and transports to the local fakes,
/// which check them as each service would and record what arrived.
@Suite(.serialized) struct MessageOptionsAgainstFakesTests {
    typealias F = RelayFixtures

    @Test func apnsReceivesABackgroundPushWithItsCollapseIDAndThePlainOneWithout() async throws {
        let setup = try await HTTP2PushClientTests.APNsSetup()
        let options = F.push(priority: .normal, pushType: .background, collapseID: "trade-17", badge: 2)
        #expect(await setup.provider.deliver(options) == .sent)
        #expect(await setup.provider.deliver(F.push()) == .sent)
        let received = setup.fake.received
        await setup.tearDown()

        #expect(received.count == 2 && received.allSatisfy { $0.problems.isEmpty }, "\(received.map(\.problems))")
        #expect(received[0].headers["apns-push-type"] == "background")
        #expect(received[0].headers["apns-priority"] == "5")
        #expect(received[0].headers["apns-collapse-id"] == "trade-17")
        #expect(received[0].json?["aps"]?["badge"] == .number("2"))
        #expect(received[1].headers["apns-push-type"] == "alert" && received[1].headers["apns-priority"] == "10")
        #expect(received[1].headers["apns-collapse-id"] == nil && received[1].json?["aps"]?["badge"] == nil)
    }

    @Test func fcmReceivesTheAndroidOptions() async throws {
        let setup = try await FakeProviderTests.FCMSetup(clock: { F.deadline - 60 })
        let token = "fcm:" + String(repeating: "A1", count: 40)
        let push = F.push(platform: .android, token: token, priority: .normal, collapseID: "trade-17", timeToLive: 900)
        #expect(await setup.provider.deliver(push) == .sent)
        let received = setup.fake.received
        try? await setup.transport.shutdown()
        setup.fake.stop()

        #expect(received.count == 1 && received.allSatisfy { $0.problems.isEmpty }, "\(received.map(\.problems))")
        let android = received.first?.message?["android"]
        #expect(android?["priority"] == .string("normal") && android?["ttl"] == .string("60s"))
        #expect(android?["collapse_key"] == .string("trade-17"))
    }

    @Test func aWebPushServiceReceivesUrgencyAndTopic() async throws {
        let fake = try FakeWebPush()
        let port = try await fake.start()
        let caFile = NSTemporaryDirectory() + "fake-webpush-\(UUID().uuidString).pem"
        try fake.certificate.writeCertificate(to: caFile)
        let transport = try GuardedWebPushTransport(
            policy: WebPushNetworkPolicy(allowed: [try #require(IPNetwork("127.0.0.0/8"))]),
            resolver: TableResolver(table: ["localhost": ["127.0.0.1"]]), caFile: caFile, timeout: .seconds(10))
        let provider = WebPushProvider(
            transport: transport,
            tokens: VAPIDTokens(key: WebPushProviderTests.vapid, subject: "mailto:ops@example.org"),
            logger: Logger(label: "test"))
        let endpoint = "https://localhost:\(port)/push/abc"
        let keys = WebPushProviderTests.subscription
        let push = F.push(
            platform: .webpush, token: endpoint, expiration: Int64(Date().timeIntervalSince1970) + 600,
            priority: .normal, collapseID: "trade-17",
            webPushSubscription: WebPushSubscription(storedEndpoint: endpoint, p256dh: keys.p256dh, auth: keys.auth))
        #expect(await provider.deliver(push) == .sent)
        let received = fake.received
        try? await transport.shutdown()
        await fake.stopAndWait()
        try? FileManager.default.removeItem(atPath: caFile)

        #expect(received.count == 1 && received.allSatisfy { $0.problems.isEmpty }, "\(received.map(\.problems))")
        #expect(received.first?.headers["urgency"] == "normal" && received.first?.headers["topic"] == "trade-17")
    }
}
