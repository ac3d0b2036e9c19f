import Crypto
import Foundation
import HeraldCore
import HeraldRelay
import Logging
import Synchronization
import Testing

/// A Web Push transport that records requests and answers from a closure.
final class ScriptedWebPushTransport: WebPushTransport {
    private let answer: @Sendable (PushHTTPRequest) throws -> PushHTTPResponse
    private let log = Mutex<[PushHTTPRequest]>([])

    init(_ answer: @escaping @Sendable (PushHTTPRequest) throws -> PushHTTPResponse) { self.answer = answer }

    func send(_ request: PushHTTPRequest, to endpoint: WebPushEndpoint) async throws -> PushHTTPResponse {
        log.withLock { $0.append(request) }
        return try answer(request)
    }

    var requests: [PushHTTPRequest] { log.withLock { $0 } }
}

/// A resolver answering from a table.
struct TableResolver: HostResolver {
    let table: [String: [String]]

    func addresses(of host: String, port: Int) async throws -> [[UInt8]] {
        (table[host] ?? []).compactMap(IPNetwork.parseAddress)
    }
}

@Suite struct WebPushProviderTests {
    static let endpoint = "https://push.example.org/up/abc?up=1"
    static let subscriberKey = P256.KeyAgreement.PrivateKey()
    static let auth = SecureRandom.bytes(16)
    static let vapid = VAPIDKey(privateKey: P256.Signing.PrivateKey())

    static var subscription: WebPushSubscription {
        WebPushSubscription(
            storedEndpoint: endpoint, p256dh: Base64URL.encode(Array(subscriberKey.publicKey.x963Representation)),
            auth: Base64URL.encode(auth))
    }

    static func provider(
        _ transport: any WebPushTransport, clock: ManualClock = ManualClock(1_763_769_700)
    ) -> WebPushProvider {
        WebPushProvider(
            transport: transport, tokens: VAPIDTokens(key: vapid, subject: "mailto:ops@example.org", clock: clock.read),
            clock: clock.read, logger: Logger(label: "test"))
    }

    /// A push as the server maps a claimed one: a day's max age, its binding's keys unless it had none.
    static func push(_ content: PushContent, withKeys: Bool = true) -> PushMessage {
        RelayFixtures.push(
            platform: .webpush, token: endpoint, content: .notification(content),
            expiration: RelayFixtures.queuedAt + 86_400, webPushSubscription: withKeys ? subscription : nil)
    }

    static func open(_ request: PushHTTPRequest) throws -> JSONValue {
        try JSONParser.parse(try WebPushCipher.decrypt(request.body, privateKey: subscriberKey, authSecret: auth))
    }

    @Test func aPushIsEncryptedForTheSubscriptionWithTTLUrgencyAndVAPID() async throws {
        let transport = ScriptedWebPushTransport { _ in PushHTTPResponse(status: 201) }
        let provider = Self.provider(transport)
        #expect(await provider.deliver(Self.push(RelayFixtures.content())) == .sent)
        #expect(await provider.deliver(Self.push(RelayFixtures.content(.broadcast))) == .sent)
        #expect(await provider.deliver(Self.push(RelayFixtures.setup)) == .sent)
        let requests = transport.requests
        #expect(requests.count == 3)
        let targeted = requests[0]
        #expect(targeted.url == Self.endpoint)
        #expect(targeted.header("content-encoding") == "aes128gcm")
        #expect(targeted.header("content-type") == "application/octet-stream")
        // Queued 100 s before now with a day's max age.
        #expect(targeted.header("ttl") == "86300")
        #expect(targeted.header("urgency") == "high" && targeted.header("topic") == nil)
        #expect(requests[1].header("urgency") == "normal" && requests[2].header("urgency") == "normal")
        let payload = try Self.open(targeted)
        #expect(payload["notification"]?["title"] == .string("Trade accepted"))
        #expect(payload["data"]?["amsg"] == .string("Pay 0.1 ETH") && payload["data"]?["sid"] == .string("42"))
        #expect(try Self.open(requests[2])["data"]?["type"] == .string("setup"))

        // Authorization: vapid t=<JWT>,k=<key>, ES256 over the origin; one token for the origin.
        let authorization = try #require(targeted.header("authorization"))
        #expect(authorization.hasPrefix("vapid t=") && authorization.hasSuffix(",k=" + Self.vapid.publicKey))
        #expect(Set(requests.compactMap { $0.header("authorization") }).count == 1)
        let jwt = String(authorization.dropFirst(8).prefix { $0 != "," })
        let parts = jwt.split(separator: ".").map(String.init)
        let claims = try JSONParser.parse(try #require(Base64URL.decode(parts[1])))
        #expect(
            try JSONParser.parse(try #require(Base64URL.decode(parts[0]))).jsonText == #"{"typ":"JWT","alg":"ES256"}"#)
        #expect(claims["aud"] == .string("https://push.example.org"))
        #expect(claims["exp"] == .number(String(1_763_769_700 + 12 * 3600)))
        #expect(claims["sub"] == .string("mailto:ops@example.org"))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(Self.vapid.privateKey.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test func theVAPIDTokenIsReusedPerOriginUntilAnHourBeforeItExpires() throws {
        let clock = ManualClock(1_000_000)
        let tokens = VAPIDTokens(key: Self.vapid, subject: "mailto:ops@example.org", clock: clock.read)
        let first = try tokens.token(origin: "https://a.example")
        #expect(try tokens.token(origin: "https://b.example") != first)
        clock.advance(11 * 3600 - 1)
        #expect(try tokens.token(origin: "https://a.example") == first)
        clock.advance(1)
        #expect(try tokens.token(origin: "https://a.example") != first)
    }

    @Test func answersAreClassifiedAsPROTOCOL9Says() async throws {
        let cases: [(Int, String?, PushDelivery)] = [
            (200, nil, .sent), (201, nil, .sent), (202, nil, .sent),
            (404, nil, .deadToken(reason: "Web Push 404")), (410, nil, .deadToken(reason: "Web Push 410")),
            (429, "30", .retryable(reason: "Web Push 429", retryAfter: 30)),
            // A peer's number: bounded however many digits, ignored when not a non-negative integer.
            (429, " 9223372036854775807 ", .retryable(reason: "Web Push 429", retryAfter: RemoteNumber.secondsCeiling)),
            (429, "99999999999999999999", .retryable(reason: "Web Push 429", retryAfter: RemoteNumber.secondsCeiling)),
            (429, "-5", .retryable(reason: "Web Push 429", retryAfter: nil)),
            (503, "Fri, 31 Dec 1999 23:59:59 GMT", .retryable(reason: "Web Push 503", retryAfter: nil)),
            (503, nil, .retryable(reason: "Web Push 503", retryAfter: nil)),
            (301, nil, .failed(reason: "Web Push 301")), (400, nil, .failed(reason: "Web Push 400")),
            (401, nil, .failed(reason: "Web Push 401")), (403, nil, .failed(reason: "Web Push 403")),
            (413, nil, .failed(reason: "Web Push 413")),
        ]
        for (status, retryAfter, expected) in cases {
            let transport = ScriptedWebPushTransport { _ in
                PushHTTPResponse(status: status, headers: retryAfter.map { [("Retry-After", $0)] } ?? [])
            }
            let outcome = await Self.provider(transport).deliver(Self.push(RelayFixtures.content()))
            #expect(outcome == expected, "\(status)")
        }
    }

    @Test func aLargePayloadIsCutToTypeSidEpochAndFitsOneRecord() async throws {
        let transport = ScriptedWebPushTransport { _ in PushHTTPResponse(status: 201) }
        let long = RelayFixtures.content(message: String(repeating: "é", count: 2000))
        #expect(await Self.provider(transport).deliver(Self.push(long)) == .sent)
        let request = try #require(transport.requests.first)
        #expect(request.body.count <= 4096)
        let data = try Self.open(request)["data"]
        #expect(data?.objectMembers?.map(\.key) == ["type", "sid", "epoch"])
        // Non-ASCII and `/` are written as themselves: the 3993 bytes are those bytes.
        let short = RelayFixtures.content(message: "é/ü")
        #expect(await Self.provider(transport).deliver(Self.push(short)) == .sent)
        let plaintext = try WebPushCipher.decrypt(
            transport.requests[1].body, privateKey: Self.subscriberKey, authSecret: Self.auth)
        #expect(String(decoding: plaintext, as: UTF8.self).contains("\"amsg\":\"é/ü\""))
    }

    @Test func aPushClaimedWithoutKeysSendsNothing() async {
        let transport = ScriptedWebPushTransport { _ in PushHTTPResponse(status: 201) }
        let outcome = await Self.provider(transport).deliver(Self.push(RelayFixtures.content(), withKeys: false))
        guard case .failed = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func theGuardRefusesANameIfAnyOfItsAddressesIsRefused() async throws {
        let resolver = TableResolver(table: [
            "public.example": ["93.184.216.34", "2606:2800:220:1::1"],
            "mixed.example": ["93.184.216.34", "10.0.0.5"],
            "mapped.example": ["::ffff:169.254.169.254"],
            "lan.example": ["192.168.1.20"],
            "nothing.example": [],
        ])
        let strict = try GuardedWebPushTransport(policy: WebPushNetworkPolicy(), resolver: resolver)
        let lan = try GuardedWebPushTransport(
            policy: WebPushNetworkPolicy(allowed: [try #require(IPNetwork("192.168.1.0/24"))]), resolver: resolver)
        defer {
            Task {
                try? await strict.shutdown()
                try? await lan.shutdown()
            }
        }
        func endpoint(_ host: String) throws -> WebPushEndpoint { try #require(WebPushEndpoint("https://\(host)/p")) }
        let checked = try await strict.checkedAddress(of: try endpoint("public.example"))
        #expect(checked == IPNetwork.parseAddress("93.184.216.34"))
        for host in ["mixed.example", "mapped.example", "lan.example", "nothing.example", "127.0.0.1"] {
            await #expect(throws: WebPushRefusal.self, "\(host)") {
                _ = try await strict.checkedAddress(of: try endpoint(host))
            }
        }
        let allowed = try await lan.checkedAddress(of: try endpoint("lan.example"))
        #expect(allowed == IPNetwork.parseAddress("192.168.1.20"))
    }

    @Test func theGuardChecksResolvedIPv6FormsAsTheIPv4AddressTheyEmbed() async throws {
        let resolver = TableResolver(table: [
            "dns64.example": ["64:ff9b::808:808"],
            "dns64-private.example": ["64:ff9b::a00:1"],
            "sixtofour.example": ["2002:a00:1::1"],
            "compatible.example": ["::10.0.0.1"],
            "sitelocal.example": ["fec0::1"],
            "localnat64.example": ["64:ff9b:1::808:808"],
            "dns64-loopback.example": ["64:ff9b::7f00:1"],
        ])
        let strict = try GuardedWebPushTransport(policy: WebPushNetworkPolicy(), resolver: resolver)
        let loopback = try GuardedWebPushTransport(
            policy: WebPushNetworkPolicy(allowed: [try #require(IPNetwork("127.0.0.0/8"))]), resolver: resolver)
        defer {
            Task {
                try? await strict.shutdown()
                try? await loopback.shutdown()
            }
        }
        func endpoint(_ host: String) throws -> WebPushEndpoint { try #require(WebPushEndpoint("https://\(host)/p")) }
        // The NAT64 address itself is what is connected to: the gateway translates it.
        let reached = try await strict.checkedAddress(of: try endpoint("dns64.example"))
        #expect(reached == IPNetwork.parseAddress("64:ff9b::808:808"))
        for host in [
            "dns64-private.example", "sixtofour.example", "compatible.example", "sitelocal.example",
            "localnat64.example", "dns64-loopback.example",
        ] {
            await #expect(throws: WebPushRefusal.self, "\(host)") {
                _ = try await strict.checkedAddress(of: try endpoint(host))
            }
        }
        let admitted = try await loopback.checkedAddress(of: try endpoint("dns64-loopback.example"))
        #expect(admitted == IPNetwork.parseAddress("64:ff9b::7f00:1"))
    }
}
