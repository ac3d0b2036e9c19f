import Crypto
import Foundation
import HeraldCore
import HeraldRelay
import Logging
import Synchronization
import Testing

@Suite struct APNsTests {
    typealias F = RelayFixtures
    static let key = P256.Signing.PrivateKey()

    func provider(
        _ transport: ScriptedTransport, clock: ManualClock = ManualClock(1_763_769_600),
        sandboxHost: String = "https://sandbox.test/"
    ) -> (APNsProvider, APNsTokenAuthority) {
        let tokens = APNsTokenAuthority(key: Self.key, keyID: "KEY123", teamID: "TEAM45", clock: clock.read)
        let provider = APNsProvider(
            transport: transport, tokens: tokens, topic: "org.example.herald", productionHost: "https://prod.test",
            sandboxHost: sandboxHost, logger: Logger(label: "test"))
        return (provider, tokens)
    }

    /// Checks an ES256 provider token against the key's public half and returns its claims.
    static func verify(_ jwt: String) throws -> JSONValue {
        let parts = jwt.split(separator: ".")
        #expect(parts.count == 3)
        let header = try JSONParser.parse(try #require(Base64URL.decode(String(parts[0]))))
        #expect(header["alg"] == .string("ES256") && header["kid"] == .string("KEY123"))
        let signature = try P256.Signing.ECDSASignature(
            rawRepresentation: try #require(Base64URL.decode(String(parts[2]))))
        #expect(Self.key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        return try JSONParser.parse(try #require(Base64URL.decode(String(parts[1]))))
    }

    @Test func theProviderTokenIsSignedSharedAndRefreshedByTheRules() async throws {
        let clock = ManualClock(1_000_000)
        let tokens = APNsTokenAuthority(key: Self.key, keyID: "KEY123", teamID: "TEAM45", clock: clock.read)
        let first = try await tokens.token()
        let claims = try Self.verify(first)
        #expect(claims["iss"] == .string("TEAM45") && claims["iat"] == .number("1000000"))
        clock.advance(10 * 60)
        // 403 ExpiredProviderToken before 20 minutes: the same token (a refresh would be refused).
        #expect(try await tokens.renew(rejected: first) == first)
        clock.advance(39 * 60)
        #expect(try await tokens.token() == first, "shared until 50 minutes")
        clock.advance(60)
        let second = try await tokens.token()
        #expect(second != first, "refreshed after 50 minutes")
        #expect(try Self.verify(second)["iat"] == .number(String(1_000_000 + 50 * 60)))
        clock.advance(20 * 60)
        let third = try await tokens.renew(rejected: second)
        #expect(third != second, "renewed early once 20 minutes old")
        #expect(try await tokens.renew(rejected: second) == third, "a stale rejection does not renew again")
        #expect(await tokens.minted == 3)
    }

    @Test func aPushGoesToItsHostWithTheHeadersAndBodyOfTheProtocol() async throws {
        let transport = ScriptedTransport { _ in PushHTTPResponse(status: 200) }
        let (provider, _) = provider(transport)
        #expect(await provider.deliver(F.push()) == .sent)
        #expect(await provider.deliver(F.push(platform: .iosSandbox)) == .sent)
        let requests = transport.requests
        #expect(
            requests.map(\.url) == [
                "https://prod.test/3/device/\(F.iosToken)", "https://sandbox.test/3/device/\(F.iosToken)",
            ])
        let request = try #require(requests.first)
        #expect(request.header("apns-topic") == "org.example.herald")
        #expect(request.header("apns-push-type") == "alert")
        #expect(request.header("apns-priority") == "10")
        #expect(request.header("apns-expiration") == String(1_763_769_600 + 3600))
        #expect(request.header("apns-id") == "00010203-0405-4607-8809-0a0b0c0d0e0f")
        let bearer = try #require(request.header("authorization"))
        #expect(bearer.hasPrefix("bearer "))
        _ = try Self.verify(String(bearer.dropFirst(7)))
        let body = try #require(F.json(request.body))
        #expect(body["aps"]?["alert"]?["title"] == .string("Trade accepted"))
        #expect(body["aps"]?["mutable-content"] == .number("1") && body["aps"]?["sound"] == .string("default"))
        #expect(body["sid"] == .string("42") && body["amsg"] == .string("Pay 0.1 ETH") && body["type"] == .string("3"))
    }

    @Test func secretOversizedAndSetupBodies() async throws {
        let transport = ScriptedTransport { _ in PushHTTPResponse(status: 200) }
        let (provider, _) = provider(transport)
        _ = await provider.deliver(F.push(content: .notification(F.content(.secret))))
        let secret = try #require(F.json(transport.requests[0].body))
        #expect(secret["aps"]?["alert"]?["title"] == .string("Desk has sent you a secret message!"))
        #expect(secret["secret"] == .string("00aa"))

        _ = await provider.deliver(
            F.push(content: .notification(F.content(message: String(repeating: "x", count: 5000)))))
        let big = try #require(F.json(transport.requests[1].body))
        #expect(transport.requests[1].body.count <= 4096)
        #expect(big.objectMembers?.map(\.key) == ["aps", "type", "sid", "epoch"], "over 4096 bytes: minimal data")
        #expect(big["aps"]?["alert"]?["title"] == .string("Trade accepted"), "the alert stays")

        _ = await provider.deliver(F.push(content: .notification(F.setup)))
        let setup = try #require(F.json(transport.requests[2].body))
        #expect(setup["aps"]?["alert"]?["body"] == .string("Notifications are on for this device."))
        #expect(
            setup["type"] == .string("setup") && setup["sid"] == .string("")
                && setup["epoch"] == .string("1763769600000"))
    }

    @Test func answersAreClassifiedByTheProtocolsRules() async throws {
        func outcome(_ status: Int, _ reason: String?, headers: [(String, String)] = []) async -> PushDelivery {
            let body = reason.map { Array(#"{"reason":"\#($0)"}"#.utf8) } ?? []
            let transport = ScriptedTransport { _ in PushHTTPResponse(status: status, headers: headers, body: body) }
            return await provider(transport).0.deliver(F.push())
        }
        #expect(await outcome(410, "Unregistered") == .deadToken(reason: "APNs 410 Unregistered"))
        #expect(await outcome(410, "ExpiredToken") == .deadToken(reason: "APNs 410 ExpiredToken"))
        #expect(await outcome(400, "BadDeviceToken") == .deadToken(reason: "APNs 400 BadDeviceToken"))
        #expect(await outcome(400, "DeviceTokenNotForTopic") == .deadToken(reason: "APNs 400 DeviceTokenNotForTopic"))
        #expect(await outcome(400, "BadExpirationDate") == .failed(reason: "APNs 400 BadExpirationDate"))
        #expect(await outcome(413, "PayloadTooLarge") == .failed(reason: "APNs 413 PayloadTooLarge"))
        #expect(
            await outcome(429, "TooManyRequests", headers: [("Retry-After", "30")])
                == .retryable(reason: "APNs 429 TooManyRequests", retryAfter: 30))
        #expect(await outcome(503, nil) == .retryable(reason: "APNs 503", retryAfter: nil))
        struct Down: Error {}
        let down = ScriptedTransport { _ in throw Down() }
        guard case .retryable = await provider(down).0.deliver(F.push()) else {
            Issue.record("a network error is retried")
            return
        }
    }

    /// A test set-up often points both hosts at one fake; §4.3's dead-token list must prune there exactly as
    /// it does against Apple, for both platforms.
    @Test(arguments: [Platform.ios, .iosSandbox])
    func deadTokenAnswersPruneAlikeWhenBothHostsAreOne(_ platform: Platform) async {
        let dead = [
            (410, "Unregistered"), (410, "ExpiredToken"), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"),
        ]
        for (status, reason) in dead {
            let body = Array(#"{"reason":"\#(reason)"}"#.utf8)
            let transport = ScriptedTransport { _ in PushHTTPResponse(status: status, headers: [], body: body) }
            let (alike, _) = provider(transport, sandboxHost: "https://prod.test")
            #expect(
                await alike.deliver(F.push(platform: platform)) == .deadToken(reason: "APNs \(status) \(reason)"))
            #expect(transport.requests.first?.url == "https://prod.test/3/device/\(F.iosToken)")
        }
    }

    @Test func anExpiredProviderTokenIsRenewedWithinTheRuleAndRetriedOnce() async throws {
        let clock = ManualClock(1_000_000)
        let transport = ScriptedTransport { request in
            // The first token is refused; any later one accepted.
            request.header("authorization")?.contains("eyJ") == true && ScriptedTransportState.seen.increment() == 1
                ? PushHTTPResponse(status: 403, body: Array(#"{"reason":"ExpiredProviderToken"}"#.utf8))
                : PushHTTPResponse(status: 200)
        }
        let (provider, tokens) = provider(transport, clock: clock)
        ScriptedTransportState.seen.reset()
        _ = try await tokens.token()
        clock.advance(25 * 60)
        #expect(await provider.deliver(F.push()) == .sent)
        #expect(transport.requests.count == 2)
        #expect(transport.requests[0].header("authorization") != transport.requests[1].header("authorization"))
        #expect(await tokens.minted == 2)
    }
}

/// A counter shared with a transport's closure.
enum ScriptedTransportState {
    static let seen = Counter()

    final class Counter: Sendable {
        private let value = Mutex(0)
        func increment() -> Int {
            value.withLock {
                $0 += 1; return $0
            }
        }
        func reset() { value.withLock { $0 = 0 } }
    }
}
