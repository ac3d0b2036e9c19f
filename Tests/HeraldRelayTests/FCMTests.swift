import Crypto
import CryptoExtras
import Foundation
import HeraldCore
import HeraldRelay
import Logging
import Testing

@Suite struct FCMTests {
    typealias F = RelayFixtures
    static let androidToken = "fcm-token:" + String(repeating: "Ab_9", count: 10)
    static let rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    static func account(tokenURI: String = "https://oauth.test/token") throws -> ServiceAccount {
        let json = JSONValue.object([
            ("type", .string("service_account")), ("project_id", .string("herald-test")),
            ("private_key", .string(rsa.pemRepresentation)), ("client_email", .string("push@herald-test.iam")),
            ("token_uri", .string(tokenURI)),
        ])
        return try ServiceAccount(json: json.jsonBytes)
    }

    /// A transport playing both Google endpoints: OAuth tokens numbered from 1, messages answered by `send`.
    static func google(
        expiresIn: String = "3600",
        send: @escaping @Sendable (PushHTTPRequest) -> PushHTTPResponse = { _ in
            PushHTTPResponse(status: 200, body: Array(#"{"name":"projects/herald-test/messages/1"}"#.utf8))
        }
    ) -> ScriptedTransport {
        let issued = ScriptedTransportState.Counter()
        return ScriptedTransport { request in
            guard request.url.hasPrefix("https://oauth.test/") else { return send(request) }
            let number = issued.increment()
            return PushHTTPResponse(
                status: 200,
                body: Array(
                    #"{"access_token":"ya29.t\#(number)","expires_in":\#(expiresIn),"token_type":"Bearer"}"#.utf8))
        }
    }

    func provider(
        _ transport: ScriptedTransport, clock: ManualClock = ManualClock(1_000_000)
    ) throws -> (FCMProvider, FCMAccessTokens) {
        let tokens = FCMAccessTokens(account: try Self.account(), transport: transport, clock: clock.read)
        let provider = FCMProvider(
            transport: transport, tokens: tokens, projectID: "herald-test", endpoint: "https://fcm.test/",
            logger: Logger(label: "test"))
        return (provider, tokens)
    }

    @Test func theAssertionIsAnRS256JWTBearerGrantAndTheTokenIsCached() async throws {
        let transport = Self.google()
        let clock = ManualClock(1_000_000)
        let (provider, tokens) = try provider(transport, clock: clock)
        #expect(await provider.deliver(F.push(platform: .android, token: Self.androidToken)) == .sent)
        #expect(await provider.deliver(F.push(platform: .android, token: Self.androidToken)) == .sent)
        #expect(await tokens.fetched == 1, "cached")
        let grant = try #require(transport.requests.first)
        #expect(grant.url == "https://oauth.test/token")
        #expect(grant.header("content-type") == "application/x-www-form-urlencoded")
        let form = String(decoding: grant.body, as: UTF8.self)
        #expect(form.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="))
        let jwt = String(form.split(separator: "=").last ?? "")
        let parts = jwt.split(separator: ".")
        #expect(parts.count == 3)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: try #require(Base64URL.decode(String(parts[2]))))
        #expect(
            Self.rsa.publicKey.isValidSignature(
                signature, for: Data("\(parts[0]).\(parts[1])".utf8), padding: .insecurePKCS1v1_5))
        let claims = try JSONParser.parse(try #require(Base64URL.decode(String(parts[1]))))
        #expect(
            claims["iss"] == .string("push@herald-test.iam") && claims["aud"] == .string("https://oauth.test/token"))
        #expect(claims["scope"] == .string("https://www.googleapis.com/auth/firebase.messaging"))
        #expect(claims["exp"] == .number("1003600"))

        let send = transport.requests[1]
        #expect(send.url == "https://fcm.test/v1/projects/herald-test/messages:send")
        #expect(send.header("authorization") == "Bearer ya29.t1")
        let message = try #require(F.json(send.body)?["message"])
        #expect(message["token"] == .string(Self.androidToken))
        #expect(message["notification"]?["title"] == .string("Trade accepted"))
        #expect(message["android"]?["priority"] == .string("high"))
        let data = try #require(message["data"]?.objectMembers)
        #expect(data.allSatisfy { $0.value.stringValue != nil } && message["data"]?["sid"] == .string("42"))

        clock.advance(3600 - 59)
        _ = await provider.deliver(F.push(platform: .android, token: Self.androidToken))
        #expect(await tokens.fetched == 2, "fetched again shortly before expiry")
    }

    /// docs/protocol.md §4.3: whatever `expires_in` says, no token is kept past an hour, and one that is
    /// not a non-negative integer counts as an hour (a sum with `Int64.max` once trapped here).
    @Test(arguments: ["9223372036854775807", "99999999999999999999", "-5", "1e9", "36.5", #""3600""#])
    func noTokenIsKeptPastAnHourWhateverItsExpiresIn(_ expiresIn: String) async throws {
        let clock = ManualClock(1_000_000)
        let (provider, tokens) = try provider(Self.google(expiresIn: expiresIn), clock: clock)
        let push = F.push(platform: .android, token: Self.androidToken)
        #expect(await provider.deliver(push) == .sent)
        clock.advance(3600 - 61)
        #expect(await provider.deliver(push) == .sent)
        #expect(await tokens.fetched == 1, "kept within the hour")
        clock.advance(2)
        #expect(await provider.deliver(push) == .sent)
        #expect(await tokens.fetched == 2, "fetched again a minute before the hour ends")
    }

    @Test func a401DropsTheTokenAndUnregisteredIsDead() async throws {
        let unregistered = Array(
            #"{"error":{"code":404,"status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}"#
                .utf8)
        let answers = ScriptedTransportState.Counter()
        let transport = Self.google { _ in
            switch answers.increment() {
            case 1: return PushHTTPResponse(status: 401, body: Array(#"{"error":{"status":"UNAUTHENTICATED"}}"#.utf8))
            case 2: return PushHTTPResponse(status: 404, body: unregistered)
            case 3: return PushHTTPResponse(status: 503, headers: [("Retry-After", "12")])
            default: return PushHTTPResponse(status: 400, body: Array(#"{"error":{"status":"INVALID_ARGUMENT"}}"#.utf8))
            }
        }
        let (provider, tokens) = try provider(transport)
        let push = F.push(platform: .android, token: Self.androidToken)
        #expect(await provider.deliver(push) == .retryable(reason: "FCM 401 UNAUTHENTICATED", retryAfter: nil))
        #expect(await provider.deliver(push) == .deadToken(reason: "FCM 404 NOT_FOUND UNREGISTERED"))
        #expect(await tokens.fetched == 2, "the refused token was dropped and another fetched")
        #expect(await provider.deliver(push) == .retryable(reason: "FCM 503", retryAfter: 12))
        #expect(await provider.deliver(push) == .failed(reason: "FCM 400 INVALID_ARGUMENT"))
    }

    @Test func badServiceAccountsAreClearErrors() throws {
        #expect(throws: RelayConfigurationError.self) { try ServiceAccount(json: Array("{}".utf8)) }
        #expect(throws: RelayConfigurationError.self) { try ServiceAccount(json: Array("nope".utf8)) }
        let broken = JSONValue.object([
            ("type", .string("service_account")), ("project_id", .string("p")), ("private_key", .string("-----BEGIN")),
            ("client_email", .string("e")), ("token_uri", .string("https://t")),
        ])
        #expect(throws: RelayConfigurationError.self) { try ServiceAccount(json: broken.jsonBytes) }
    }
}
