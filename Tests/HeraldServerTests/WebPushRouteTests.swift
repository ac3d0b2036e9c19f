import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HummingbirdTesting
import Testing

@Suite struct WebPushRouteTests {
    typealias F = ServerFixture
    static let endpoint = "https://ntfy.example.org/upAbC123?up=1"
    static let p256dh = Base64URL.encode(Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation))
    static let auth = Base64URL.encode(SecureRandom.bytes(16))

    static func binding(
        _ action: WebPushBinding.Action = .register, endpoint: String = endpoint, p256dh: String = p256dh,
        auth: String = auth, nonce: UInt64
    ) -> WebPushBinding {
        WebPushBinding(
            action: action, wallet: F.key.address, endpoint: endpoint, p256dh: p256dh, auth: auth,
            audience: F.audience, nonce: UInt256(nonce), issuedAt: UInt256(UInt64(F.now - 100)),
            expiresAt: UInt256(UInt64(F.now + 200)))
    }

    static func signed(_ binding: WebPushBinding, scheme: SignatureScheme = .eip712) throws -> String {
        try binding.signed(with: F.key, scheme: scheme, domain: HeraldDomain(chainId: 1)).jsonText
    }

    @Test(arguments: SignatureScheme.allCases)
    func registerRefreshUnregisterAbsentWithoutEchoingKeys(_ scheme: SignatureScheme) async throws {
        let fixture = try F()
        try await fixture.test { client in
            let registered = try await client.post(
                try Self.signed(Self.binding(p256dh: Self.p256dh + "=", nonce: 1), scheme: scheme), uri: "/v1/webpush")
            #expect(registered.status == .ok, "\(registered.text)")
            #expect(registered.json?["status"]?.stringValue == "registered")
            #expect(registered.json?["platform"]?.stringValue == "webpush")
            #expect(registered.json?["endpoint"]?.stringValue == Self.endpoint)
            #expect(registered.json?["wallet"]?.stringValue == F.key.address.checksummed)
            #expect(registered.json?["p256dh"] == nil && registered.json?["auth"] == nil)
            let stored = try await fixture.state.store.webPushSubscription(of: F.key.address, endpoint: Self.endpoint)
            #expect(stored?.p256dh == Self.p256dh && stored?.auth == Self.auth)
            let again = try await client.post(
                try Self.signed(Self.binding(nonce: 2), scheme: scheme), uri: "/v1/webpush")
            #expect(again.json?["status"]?.stringValue == "registered")
            let gone = try await client.post(
                try Self.signed(Self.binding(.unregister, nonce: 3), scheme: scheme), uri: "/v1/webpush")
            #expect(gone.json?["status"]?.stringValue == "unregistered")
            let absent = try await client.post(
                try Self.signed(Self.binding(.unregister, nonce: 4), scheme: scheme), uri: "/v1/webpush")
            #expect(absent.json?["status"]?.stringValue == "absent")
        }
    }

    @Test func malformedSubscriptionsAreInvalidSubscriptionEvenToUnregister() async throws {
        try await F().test { client in
            var offCurve = Base64URL.decode(Self.p256dh) ?? []
            offCurve[64] ^= 1
            let cases: [WebPushBinding] = [
                Self.binding(endpoint: "http://ntfy.example.org/up", nonce: 1),
                Self.binding(endpoint: "https://127.0.0.1/up", nonce: 2),
                Self.binding(endpoint: "https://[::ffff:192.168.1.1]/up", nonce: 3),
                Self.binding(endpoint: "https://user@ntfy.example.org/up", nonce: 4),
                Self.binding(p256dh: Base64URL.encode(offCurve), nonce: 5),
                Self.binding(auth: Base64URL.encode(SecureRandom.bytes(12)), nonce: 6),
                Self.binding(.unregister, endpoint: "https://10.0.0.7/up", nonce: 7),
            ]
            for binding in cases {
                let response = try await client.post(try Self.signed(binding), uri: "/v1/webpush")
                #expect(response.status == .badRequest)
                #expect(response.errorCode == "invalid_subscription", "\(binding.endpoint) \(response.text)")
            }
        }
    }

    @Test func literalEndpointsAreCheckedAsTheIPv4AddressTheyEmbed() async throws {
        let statuses: [(String, String?)] = [
            ("https://[64:ff9b::8.8.8.8]/up", nil),
            ("https://[64:ff9b::10.0.0.1]/up", "invalid_subscription"),
            ("https://[2002:a00:1::1]/up", "invalid_subscription"),
            ("https://[::10.0.0.1]/up", "invalid_subscription"),
            ("https://[fec0::1]/up", "invalid_subscription"),
            ("https://[64:ff9b:1::1]/up", "invalid_subscription"),
        ]
        try await F().test { client in
            for (nonce, (endpoint, expected)) in statuses.enumerated() {
                let binding = Self.binding(endpoint: endpoint, nonce: UInt64(nonce + 1))
                let response = try await client.post(try Self.signed(binding), uri: "/v1/webpush")
                #expect(response.errorCode == expected, "\(endpoint) \(response.text)")
            }
        }
        let loopback = try #require(IPNetwork("127.0.0.0/8"))
        try await F(configure: { $0.webpush.allowNetworks = [loopback] }).test { client in
            for (nonce, endpoint) in ["https://[64:ff9b::7f00:1]/up", "https://[::127.0.0.1]/up"].enumerated() {
                let binding = Self.binding(endpoint: endpoint, nonce: UInt64(nonce + 1))
                let response = try await client.post(try Self.signed(binding), uri: "/v1/webpush")
                #expect(response.status == .ok, "\(endpoint) \(response.text)")
            }
        }
    }

    @Test func aDeviceBindingCannotNameWebPushAndBothCountTowardsTheLimit() async throws {
        try await F(configure: { $0.bindings.maxPerWallet = 1 }).test { client in
            let viaDevices = try await client.post(try F.signed(F.binding(platform: .webpush, token: Self.endpoint)))
            #expect(viaDevices.errorCode == "invalid_platform")
            let device = try await client.post(try F.signed(F.binding(nonce: 1)))
            #expect(device.status == .ok)
            let overLimit = try await client.post(try Self.signed(Self.binding(nonce: 2)), uri: "/v1/webpush")
            #expect(overLimit.status == .forbidden)
            #expect(overLimit.errorCode == "forbidden")
        }
    }

    @Test func theEIP191TextRendersEveryFieldInTypeOrder() throws {
        let text = try Self.binding(nonce: 42).eip191Text(chainId: UInt256(1))
        #expect(
            text == """
                Herald WebPushBinding
                action: register
                wallet: \(F.key.address.checksummed)
                endpoint: \(Self.endpoint)
                p256dh: \(Self.p256dh)
                auth: \(Self.auth)
                audience: \(F.audience)
                nonce: 42
                issuedAt: \(F.now - 100)
                expiresAt: \(F.now + 200)
                chainId: 1
                """)
        #expect(
            WebPushBinding.schema.encodeType
                == "WebPushBinding(string action,address wallet,string endpoint,string p256dh,string auth,"
                + "string audience,uint256 nonce,uint256 issuedAt,uint256 expiresAt)")
    }

    @Test func infoListsWebPushAndItsKeyOnlyWhenConfigured() async throws {
        try await F().test { client in
            let info = try await client.get("/v1/info").json
            #expect(info?["vapidPublicKey"] == nil)
            #expect(info?["platforms"] == .array([.string("ios"), .string("ios-sandbox"), .string("android")]))
        }
        let key = Base64URL.encode(Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        try await F(configure: { $0.webpush.vapidPublicKey = key }).test { client in
            let info = try await client.get("/v1/info").json
            #expect(info?["vapidPublicKey"]?.stringValue == key)
            #expect(
                info?["platforms"]
                    == .array([.string("ios"), .string("ios-sandbox"), .string("android"), .string("webpush")]))
        }
    }
}
