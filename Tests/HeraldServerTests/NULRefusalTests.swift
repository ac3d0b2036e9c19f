import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import HummingbirdTesting
import Testing

@testable import HeraldServer

/// U+0000 is refused with 400 on every route family before a store sees it: JSON envelopes, paths
/// and queries, Bisq's hex parameters and JSON body, the relay's OAuth form.
@Suite struct NULRefusalTests {
    typealias F = ServerFixture

    static func message(_ response: TestResponse) -> String {
        response.json?["error"]?["message"]?.stringValue ?? response.text
    }

    @Test func aSignedEnvelopeHoldingAnEscapedNULIsABadRequestOnBothPaths() async throws {
        // The device token is what a route would store: `\u0000` added to it.
        let signed = try F.signed(F.binding())
        let poisoned = signed.replacingOccurrences(of: F.iosToken, with: F.iosToken + "\\u0000")
        #expect(poisoned != signed)
        let fixture = try F()
        let store = fixture.state.store
        // testLive: POST /v1/devices goes through DeviceRouteFastPath there.
        try await fixture.testLive { client in
            let answer = try await client.post(poisoned)
            #expect(answer.status == .badRequest)
            #expect(answer.errorCode == "bad_request", "\(answer.text)")
            #expect(Self.message(answer).contains("U+0000"), "\(answer.text)")
            let webpush = try await client.post(poisoned, uri: "/v1/webpush")
            #expect(webpush.errorCode == "bad_request" && Self.message(webpush).contains("U+0000"))
            #expect(try await store.bindings(of: F.key.address).isEmpty)
        }
    }

    @Test func anEscapedNULInAPathOrQueryIsABadRequest() async throws {
        let wallet = F.key.address.checksummed
        try await F().test { client in
            for uri in [
                "/v1/users/\(wallet)%00/pubkey", "/v1/channels/\(wallet)%00", "/v1/notifications/12%00",
                "/v1/users/\(wallet)/feeds?page=1%00", "/v1/info?x=%00",
            ] {
                let answer = try await client.get(uri)
                #expect(answer.status == .badRequest, "\(uri)")
                #expect(answer.errorCode == "bad_request", "\(uri) \(answer.text)")
                #expect(Self.message(answer).contains("U+0000"), "\(uri) \(answer.text)")
            }
            // The text "%00", escaped, is not a NUL.
            #expect(NULRefusalMiddleware.holdsEncodedNUL("/v1/info?x=%2500") == false)
        }
    }

    @Test func bisqRoutesRefuseANULInTheHexMessageTheTokenOrTheJSONBody() async throws {
        let fixture = try F { $0.bisq.relay = true }
        let store = fixture.state.store
        try await fixture.test { client in
            let message = BisqRelayRouteTests.message
            let faults = [
                BisqRelayRouteTests.relayURI(message: message + "\u{0}"),
                BisqRelayRouteTests.relayURI(message: "\u{0}"),
                BisqRelayRouteTests.relayURI(token: BisqRelayRouteTests.androidToken + "\u{0}", isAndroid: "true"),
                BisqRelayRouteTests.relayURI() + "&mutableContent=true%00",
            ]
            for uri in faults {
                let answer = try await client.get(uri)
                #expect(answer.status == .badRequest, "\(uri)")
                #expect(answer.headers[.contentType] == "text/plain; charset=utf-8")
                #expect(answer.text.contains("U+0000") && answer.text.split(separator: "\n").count == 1)
            }
            for platform in ["apns", "fcm"] {
                let token = platform == "apns" ? F.iosToken : BisqRelayRouteTests.androidToken
                let answer = try await client.post(
                    #"{"encrypted":"\#(message)\u0000"}"#, uri: "/v1/\(platform)/device/\(token)")
                #expect(answer.status == .badRequest && answer.errorCode == "bad_request", "\(answer.text)")
                #expect(Self.message(answer).contains("U+0000"), "\(answer.text)")
            }
            #expect(try await store.queuedPushCount() == 0)
        }
    }

    @Test func theRelayTokenFormRefusesAnEscapedNUL() async throws {
        let fixture = try F()
        let (id, key) = try await RelayRouteTests.install(fixture)
        try await fixture.test { client in
            for body in [
                "grant_type=client_credentials&client_id=installation.\(id)%00&client_secret=\(key)",
                "grant_type=client_credentials&client_id=installation.\(id)&client_secret=\(key)%00",
            ] {
                let answer = try await client.post(body, uri: "/v1/relay/token", contentType: RelayRouteTests.form)
                #expect(answer.status == .badRequest, "\(answer.text)")
                #expect(answer.json?["error"]?.stringValue == "invalid_request", "\(answer.text)")
            }
        }
    }
}
