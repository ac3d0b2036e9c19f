import Foundation
import HTTPTypes
import HeraldCore
import HeraldRelay
import HeraldStore
import HummingbirdTesting
import Logging
import Testing

@testable import HeraldServer

/// docs/protocol.md §8's relay routes through the router: off by default, Bisq's plain-text legacy answers, the
/// per-token limit, and the POST routes' answer after the first attempt.
@Suite struct BisqRelayRouteTests {
    typealias F = ServerFixture
    static let message = "BisqMessageiOS|2ef5ba7d36c64aed|6y1SkHoX4dpcymNS6aMscCgTnhsnvIvDl4Q1UVv5zkRI"
    static let androidToken = "cEcb7vlj_SE:APA91bFYGqp_wsNv1OLHE3AeqUySkdUiNeuPv5yFmgGuOWqEMVycQrwPom8oq1iFNP"

    static func hex(_ text: String) -> String { Hex.encode(Array(text.utf8)) }

    static func relayURI(
        token: String = F.iosToken, message: String = message, isAndroid: String = "false",
        isProduction: String = "true", snd: String = "true", extra: String = ""
    ) -> String {
        "/relay?isAndroid=\(isAndroid)&isProduction=\(isProduction)&isContentAvailable=true&snd=\(snd)"
            + "&token=\(hex(token))&msg=\(hex(message))\(extra)"
    }

    @Test func theRoutesAreUnknownUnlessTurnedOn() async throws {
        try await F().test { client throws in
            let legacy = try await client.get(Self.relayURI())
            #expect(legacy.status == .notFound && legacy.errorCode == "not_found")
            let apns = try await client.post(#"{"encrypted":"x"}"#, uri: "/v1/apns/device/\(F.iosToken)")
            #expect(apns.status == .notFound && apns.errorCode == "not_found")
        }
    }

    @Test func theLegacyRouteQueuesTheOpaqueMessageAndAnswersSuccess() async throws {
        let fixture = try F { $0.bisq.relay = true }
        let store = fixture.state.store
        try await fixture.test { client throws in
            let loud = try await client.get(Self.relayURI(isProduction: "TRUE", extra: "&mutableContent=true"))
            #expect(loud.status == .ok && loud.text == "success\n")
            #expect(loud.headers[.contentType] == "text/plain; charset=utf-8")
            let quiet = try await client.get(Self.relayURI(isProduction: "false", snd: "False"))
            #expect(quiet.status == .ok)
            let android = try await client.get(Self.relayURI(token: Self.androidToken, isAndroid: "true"))
            #expect(android.status == .ok)
            let queued = try await store.claimDuePushes(
                now: F.now, limit: 10, platforms: nil, owner: "t", leaseUntil: F.now + 60)
            #expect(queued.map(\.platform) == [.ios, .iosSandbox, .android])
            #expect(queued.map(\.deviceToken) == [F.iosToken, F.iosToken, Self.androidToken])
            #expect(queued[0].bisq == BisqRelayContent(message: Self.message, urgent: true, mutableContent: true))
            #expect(queued[1].bisq == BisqRelayContent(message: Self.message, urgent: false, mutableContent: false))
            #expect(queued.allSatisfy { $0.bound && $0.notification == nil })
        }
    }

    @Test func aMissingOrMalformedParameterIsOnePlainLineAndQueuesNothing() async throws {
        let fixture = try F { $0.bisq.relay = true }
        let store = fixture.state.store
        try await fixture.test { client throws in
            let faults = [
                Self.relayURI().replacingOccurrences(of: "&snd=true", with: ""),
                Self.relayURI(snd: "yes"),
                Self.relayURI(token: "abcd"),
                Self.relayURI(token: F.iosToken, isAndroid: "true").replacingOccurrences(
                    of: "isAndroid=true", with: "isAndroid=maybe"),
                Self.relayURI().replacingOccurrences(of: "msg=", with: "msg=zz"),
                Self.relayURI(message: String(repeating: "m", count: 3_001)),
            ]
            for uri in faults {
                let answer = try await client.get(uri)
                #expect(answer.status == .badRequest, "\(uri)")
                #expect(answer.headers[.contentType] == "text/plain; charset=utf-8")
                #expect(answer.text.split(separator: "\n").count == 1)
                #expect(!answer.text.contains(Self.message))
            }
            #expect(try await store.queuedPushCount() == 0)
        }
    }

    @Test func eachDeviceTokenGetsABurstOfTwentyThenPlainText429() async throws {
        let fixture = try F { $0.bisq.relay = true }
        try await fixture.test { client throws in
            var statuses: [HTTPResponse.Status] = []
            var limited: TestResponse?
            for _ in 0..<30 {
                let answer = try await client.get(Self.relayURI())
                statuses.append(answer.status)
                if answer.status == .tooManyRequests, limited == nil { limited = answer }
            }
            #expect(statuses.prefix(20).allSatisfy { $0 == .ok })
            let refused = try #require(limited)
            #expect(refused.headers[.contentType] == "text/plain; charset=utf-8")
            #expect(refused.headers[.retryAfter].flatMap(Int.init) ?? 0 >= 1)
            // Another phone is not held up by this one.
            #expect(try await client.get(Self.relayURI(token: Self.androidToken, isAndroid: "true")).status == .ok)
            // The POST routes share the limit and answer with §3's code.
            let post = try await client.post(
                #"{"encrypted":"\#(Self.message)"}"#, uri: "/v1/apns/device/\(F.iosToken)")
            #expect(post.status == .tooManyRequests && post.errorCode == "rate_limited")
        }
    }

    @Test func thePostRoutesRefuseBadRequestsWithProtocolCodes() async throws {
        let fixture = try F { $0.bisq.relay = true }
        let store = fixture.state.store
        try await fixture.test { client throws in
            let uri = "/v1/apns/device/\(F.iosToken)"
            #expect(
                try await client.post(#"{"encrypted":"m"}"#, uri: "/v1/apns/device/xyz").errorCode
                    == "invalid_device_token")
            #expect(
                try await client.post(#"{"encrypted":"m"}"#, uri: "/v1/fcm/device/short").errorCode
                    == "invalid_device_token")
            #expect(try await client.post(#"{"isUrgent":true}"#, uri: uri).errorCode == "bad_request")
            #expect(try await client.post(#"{"encrypted":"m","isUrgent":"yes"}"#, uri: uri).errorCode == "bad_request")
            #expect(try await client.post("[1]", uri: uri).errorCode == "bad_request")
            let long = String(repeating: "m", count: 3_001)
            #expect(try await client.post(#"{"encrypted":"\#(long)"}"#, uri: uri).errorCode == "field_too_long")
            #expect(
                try await client.post(#"{"encrypted":"m"}"#, uri: uri, contentType: "text/plain").errorCode
                    == "unsupported_media_type")
            #expect(try await store.queuedPushCount() == 0)
        }
    }

    @Test(arguments: [
        (PushDelivery.sent, #"{"isUnregistered":false}"#),
        (
            .deadToken(reason: "APNs 410 Unregistered"),
            #"{"isUnregistered":true,"errorMessage":"APNs 410 Unregistered"}"#
        ),
        (.failed(reason: "APNs 400 BadTopic"), #"{"isUnregistered":false,"errorMessage":"failed: APNs 400 BadTopic"}"#),
        (
            .retryable(reason: "APNs 503", retryAfter: nil),
            #"{"isUnregistered":false,"errorMessage":"queued for retry: APNs 503"}"#
        ),
    ])
    func thePostRouteAnswersWithItsFirstAttempt(_ delivery: PushDelivery, _ expected: String) async throws {
        let fixture = try F { $0.bisq.relay = true }
        let provider = RecordingProvider(answers: [delivery])
        let outbox = PushOutboxService(
            state: fixture.state, providers: PushProviders(apns: provider, logger: Logger(label: "test")))
        try await fixture.test { client throws in
            async let answer = client.post(
                #"{"encrypted":"\#(Self.message)","isUrgent":true}"#, uri: "/v1/apns/device/\(F.iosToken)")
            // The worker's part, done here: send whatever is due until the route's push has gone.
            while try await outbox.drainOnce() == 0 { try await Task.sleep(for: .milliseconds(10)) }
            let response = try await answer
            #expect(response.status == .ok)
            #expect(response.text == expected)
            let sent = try #require(provider.pushes.first)
            #expect(
                sent.platform == .ios
                    && sent.bisq == BisqPushContent(message: Self.message, urgent: true, mutableContent: false))
        }
    }
}

/// The answer when no worker tries the push in time, and how `bisq.relay` is set.
@Suite struct BisqRelaySettingTests {
    @Test func aPushNotAttemptedInTimeAnswersQueued() async throws {
        let fixture = try ServerFixture { $0.bisq.relay = true }
        let store = fixture.state.store
        let controller = BisqRelayController(state: fixture.state, firstAttemptWait: .milliseconds(50))
        let id = try await store.queueBisqPush(
            BisqRelayPush(
                platform: .android, deviceToken: BisqRelayRouteTests.androidToken,
                content: BisqRelayContent(message: "m", urgent: false, mutableContent: false), now: ServerFixture.now))
        let answer = await controller.firstAttempt(of: id)
        #expect(!answer.isUnregistered)
        #expect(answer.errorMessage?.hasPrefix("queued: ") == true)
        try await store.close()
        try? FileManager.default.removeItem(atPath: fixture.folder)
    }

    /// This node's outbox service wakes the answer as it records the outcome; a push another node sent is
    /// read at the fallback's pace (1 s), never by polling the outbox every few milliseconds.
    @Test func theAnswerIsWokenByThisNodesOutcomeAndReadsAnotherNodesOnceASecond() async throws {
        let fixture = try ServerFixture { $0.bisq.relay = true }
        let store = fixture.state.store
        // This node's part first, with a fallback read too slow to answer in time: only the wake-up can.
        // The answer may wait long (a loaded machine's drain can outlast the default 10 s): what is
        // measured is how soon it comes once the outcome is recorded.
        let woken = BisqRelayController(
            state: fixture.state, firstAttemptWait: .seconds(120), fallbackReadInterval: .seconds(30))
        let controller = BisqRelayController(state: fixture.state)
        func queue() async throws -> Int64 {
            try await store.queueBisqPush(
                BisqRelayPush(
                    platform: .android, deviceToken: BisqRelayRouteTests.androidToken,
                    content: BisqRelayContent(message: "m", urgent: false, mutableContent: false),
                    now: ServerFixture.now))
        }
        func outbox(_ state: ServerState) -> PushOutboxService {
            PushOutboxService(
                state: state, providers: PushProviders(fcm: RecordingProvider(), logger: Logger(label: "test")))
        }
        let sent = BisqRelayController.FirstAttempt(isUnregistered: false, errorMessage: nil)

        let here = try await queue()
        async let answer = woken.firstAttempt(of: here)
        try await Task.sleep(for: .milliseconds(200))
        #expect(fixture.state.pushOutcomes.count == 1)
        #expect(try await outbox(fixture.state).drainOnce() == 1)
        let recorded = ContinuousClock.now
        #expect(await answer == sent)
        // 20 s, not 10: a full parallel run on two cores once took 10.35 s to resume the waiter; the 30 s
        // read is still told apart.
        #expect(ContinuousClock.now - recorded < .seconds(20), "woken by the outcome, not by the 30 s read")
        #expect(fixture.state.pushOutcomes.count == 0)

        let otherNode = ServerState(
            configuration: fixture.state.configuration, store: store, clock: { ServerFixture.now })
        let there = try await queue()
        let began = ContinuousClock.now
        async let other = controller.firstAttempt(of: there)
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await outbox(otherNode).drainOnce() == 1)
        #expect(await other == sent)
        let took = ContinuousClock.now - began
        // Not woken (this node recorded nothing), read within the 10 s wait (`sent`, not `queued`, above).
        #expect(took >= .milliseconds(900), "\(took)")
        try await store.close()
        try? FileManager.default.removeItem(atPath: fixture.folder)
    }

    @Test func theSwitchStandsAloneOrTakesAValueFromAnySource() async throws {
        #expect(try await ConfigurationLoader.load().bisq.relay == false)
        #expect(try await ConfigurationLoader.load(arguments: ["--bisq-relay"]).bisq.relay)
        #expect(try await ConfigurationLoader.load(arguments: ["--bisq-relay", "--port", "9000"]).bisq.relay)
        #expect(try await ConfigurationLoader.load(arguments: ["--bisq-relay", "false"]).bisq.relay == false)
        #expect(try await ConfigurationLoader.load(environment: ["HERALD_BISQ_RELAY": "true"]).bisq.relay)
        await #expect(throws: ConfigurationError.self) {
            try await ConfigurationLoader.load(arguments: ["--bisq-relay", "maybe"])
        }
    }
}
