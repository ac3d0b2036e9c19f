import Crypto
import Foundation
import HeraldCore
import HeraldRelay
import Logging
import Testing

/// A message's options (docs/protocol.md §10, §11.4) on each service's wire: the headers and body fields they
/// set when given, and exactly §4.3's and §9's requests without them.
@Suite struct MessageOptionsTests {
    typealias F = RelayFixtures
    static let channel = "0x3f243FdacE01Cfd9719f7359c94BA11361f32471"

    static func apnsRequest(_ push: PushMessage) async throws -> PushHTTPRequest {
        let transport = ScriptedTransport { _ in PushHTTPResponse(status: 200) }
        #expect(await APNsTests().provider(transport).0.deliver(push) == .sent)
        return try #require(transport.requests.first)
    }

    static func fcmMessage(_ push: PushMessage, now: Int64 = F.queuedAt) async throws -> JSONValue {
        let transport = FCMTests.google()
        let tokens = FCMAccessTokens(account: try FCMTests.account(), transport: transport)
        let provider = FCMProvider(
            transport: transport, tokens: tokens, projectID: "herald-test", endpoint: "https://fcm.test",
            clock: { now }, logger: Logger(label: "test"))
        #expect(await provider.deliver(push) == .sent)
        let send = try #require(transport.requests.first { $0.url.hasSuffix("messages:send") })
        return try #require(F.json(send.body)?["message"])
    }

    static func webPushRequest(_ push: PushMessage) async throws -> PushHTTPRequest {
        let transport = ScriptedWebPushTransport { _ in PushHTTPResponse(status: 201) }
        #expect(await WebPushProviderTests.provider(transport).deliver(push) == .sent)
        return try #require(transport.requests.first)
    }

    static func webPush(_ content: PushContent = F.content(), priority: PushMessage.Priority? = nil) -> PushMessage {
        F.push(
            platform: .webpush, token: WebPushProviderTests.endpoint, content: .notification(content),
            priority: priority, collapseID: priority == nil ? nil : "trade-17",
            webPushSubscription: WebPushProviderTests.subscription)
    }

    @Test func withoutOptionsAPNsGetsExactlyTheHeadersAndApsOfSection43() async throws {
        let request = try await Self.apnsRequest(F.push())
        #expect(
            request.headers.map(\.0) == [
                "authorization", "apns-topic", "apns-push-type", "apns-priority", "apns-expiration", "apns-id",
                "content-type",
            ])
        #expect(
            request.headers.dropFirst().map(\.1) == [
                "org.example.herald", "alert", "10", String(F.deadline), "00010203-0405-4607-8809-0a0b0c0d0e0f",
                "application/json",
            ])
        let body = try #require(F.json(request.body))
        #expect(body["aps"]?.objectMembers?.map(\.key) == ["alert", "mutable-content", "sound"])
    }

    @Test func apnsCarriesTheOptionsInItsHeadersAndAps() async throws {
        let request = try await Self.apnsRequest(
            F.push(
                priority: .normal, pushType: .background, collapseID: "trade-17", timeToLive: 600, badge: 3,
                threadID: Self.channel))
        #expect(request.header("apns-push-type") == "background")
        #expect(request.header("apns-priority") == "5")
        #expect(request.header("apns-collapse-id") == "trade-17")
        #expect(request.header("apns-expiration") == String(F.deadline), "a ttl above 0 keeps the deadline")
        let aps = try #require(F.json(request.body)?["aps"])
        #expect(aps.objectMembers?.map(\.key) == ["alert", "mutable-content", "sound", "badge", "thread-id"])
        #expect(aps["badge"] == .number("3") && aps["thread-id"] == .string(Self.channel))
    }

    /// §11.4: a `ttl` of 0 is `apns-expiration: 0` (APNs tries once, stores nothing), whatever the deadline.
    @Test func aTTLOfZeroIsAnAPNsExpirationOfZero() async throws {
        let request = try await Self.apnsRequest(F.push(timeToLive: 0))
        #expect(request.header("apns-expiration") == "0")
        #expect(request.header("apns-priority") == "10" && request.header("apns-collapse-id") == nil)
    }

    @Test func withoutOptionsFCMGetsOnlyAHighPriority() async throws {
        let message = try await Self.fcmMessage(F.push(platform: .android))
        #expect(message["android"] == .object([("priority", .string("high"))]))
        #expect(message.objectMembers?.map(\.key) == ["token", "notification", "data", "android"])
    }

    /// `android.ttl` is the whole seconds left until the deadline, and only when the message gave a `ttl`.
    @Test func fcmCarriesPriorityTTLAndCollapseKey() async throws {
        let message = try await Self.fcmMessage(
            F.push(
                platform: .android, priority: .normal, collapseID: "trade-17", timeToLive: 3600, badge: 3,
                threadID: Self.channel),
            now: F.deadline - 1200)
        #expect(
            message["android"]
                == .object([
                    ("priority", .string("normal")), ("ttl", .string("1200s")), ("collapse_key", .string("trade-17")),
                ]))
        #expect(!String(decoding: message.jsonBytes, as: UTF8.self).contains(Self.channel), "no thread id on FCM")
        let late = try await Self.fcmMessage(F.push(platform: .android, timeToLive: 0), now: F.deadline + 5)
        #expect(late["android"]?["ttl"] == .string("0s"), "never negative")
    }

    @Test func webPushTakesUrgencyAndTopicFromTheOptionsAndTheRuleByTypeWithout() async throws {
        let plain = try await Self.webPushRequest(Self.webPush(F.content(.broadcast)))
        #expect(plain.header("urgency") == "normal" && plain.header("topic") == nil)
        let urgent = try await Self.webPushRequest(Self.webPush(F.content(.broadcast), priority: .high))
        #expect(urgent.header("urgency") == "high" && urgent.header("topic") == "trade-17")
        let quiet = try await Self.webPushRequest(Self.webPush(F.content(.targeted), priority: .normal))
        #expect(quiet.header("urgency") == "normal")
    }

    @Test func aBisqPushTakesThePriorityAndCollapseIDButKeepsItsBody() async throws {
        let bisq = BisqPushContent(message: BisqPushBodyTests.message, urgent: false, mutableContent: false)
        let request = try await Self.apnsRequest(
            F.push(content: .bisq(bisq), priority: .high, collapseID: "bisq-1", badge: 3, threadID: Self.channel))
        #expect(request.header("apns-priority") == "10" && request.header("apns-collapse-id") == "bisq-1")
        #expect(
            String(decoding: request.body, as: UTF8.self)
                == #"{"aps":{"alert":{"loc-key":"notification"},"content-available":1},"encrypted":"\#(bisq.message)"}"#
        )
        let android = try await Self.fcmMessage(F.push(platform: .android, content: .bisq(bisq), priority: .high))
        #expect(android["android"]?["priority"] == .string("high"))
    }

    @Test func aBisqPushGoesNeitherToWebPushNorThroughAnUpstream() async throws {
        let bisq = PushMessage.Content.bisq(BisqPushContent(message: "m", urgent: true, mutableContent: false))
        let webPush = ScriptedWebPushTransport { _ in PushHTTPResponse(status: 201) }
        let outcome = await WebPushProviderTests.provider(webPush).deliver(
            F.push(platform: .webpush, content: bisq, webPushSubscription: WebPushProviderTests.subscription))
        #expect(outcome == .failed(reason: "a Bisq push cannot go to Web Push") && webPush.requests.isEmpty)
        let upstream = ScriptedTransport { _ in PushHTTPResponse(status: 500) }
        guard case .failed = await UpstreamProviderTests.provider(upstream).deliver(F.push(content: bisq)) else {
            Issue.record("a Bisq push is not forwarded")
            return
        }
        #expect(upstream.requests.isEmpty)
    }
}
