import Foundation
import HeraldCore
import HeraldRelay
import Testing

/// docs/protocol.md §8: the bodies and headers Bisq's phone apps expect, the message passed through untouched.
@Suite struct BisqPushBodyTests {
    typealias F = RelayFixtures
    static let message = "BisqMessageiOS|2ef5ba7d36c64aed|6y1SkHoX4dpcymNS6aMscCgTnhsnvIvDl4Q1UVv5zkRI"

    /// As the server maps a queued Bisq push: APNs keeps it four weeks (§8).
    static func push(platform: Platform, token: String, urgent: Bool, mutable: Bool = false) -> PushMessage {
        F.push(
            platform: platform, token: token,
            content: .bisq(BisqPushContent(message: message, urgent: urgent, mutableContent: mutable)),
            expiration: F.queuedAt + BisqPushBody.apnsExpirySeconds)
    }

    @Test func anAPNsBisqPushCarriesLocKeyContentAvailableAndTheMessage() async throws {
        let transport = ScriptedTransport { _ in PushHTTPResponse(status: 200) }
        let (provider, _) = APNsTests().provider(transport)
        #expect(await provider.deliver(Self.push(platform: .ios, token: F.iosToken, urgent: true)) == .sent)
        #expect(
            await provider.deliver(Self.push(platform: .iosSandbox, token: F.iosToken, urgent: false, mutable: true))
                == .sent)
        let (loud, quiet) = (transport.requests[0], transport.requests[1])
        #expect(loud.url == "https://prod.test/3/device/\(F.iosToken)")
        #expect(quiet.url == "https://sandbox.test/3/device/\(F.iosToken)")
        #expect(
            String(decoding: loud.body, as: UTF8.self)
                == #"{"aps":{"alert":{"loc-key":"notification"},"content-available":1,"sound":"default"},"encrypted":"\#(Self.message)"}"#
        )
        #expect(
            String(decoding: quiet.body, as: UTF8.self)
                == #"{"aps":{"alert":{"loc-key":"notification"},"content-available":1,"mutable-content":1},"encrypted":"\#(Self.message)"}"#
        )
        #expect(loud.header("apns-push-type") == "alert" && quiet.header("apns-push-type") == "alert")
        #expect(loud.header("apns-priority") == "10" && quiet.header("apns-priority") == "5")
        #expect(loud.header("apns-expiration") == String(1_763_769_600 + 28 * 86_400))
    }

    @Test func anFCMBisqPushIsDataOnlyWithItsPriority() async throws {
        let transport = FCMTests.google()
        let (provider, _) = try FCMTests().provider(transport)
        let token = FCMTests.androidToken
        #expect(await provider.deliver(Self.push(platform: .android, token: token, urgent: true)) == .sent)
        #expect(await provider.deliver(Self.push(platform: .android, token: token, urgent: false)) == .sent)
        let sends = transport.requests.filter { $0.url.hasSuffix("messages:send") }
        #expect(sends.count == 2)
        #expect(
            String(decoding: sends[0].body, as: UTF8.self)
                == #"{"message":{"token":"\#(token)","data":{"encrypted":"\#(Self.message)"},"android":{"priority":"high"}}}"#
        )
        #expect(F.json(sends[1].body)?["message"]?["android"]?["priority"] == .string("normal"))
    }
}
