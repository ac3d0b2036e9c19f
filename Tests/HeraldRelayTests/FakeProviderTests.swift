import Crypto
import Foundation
import HeraldCore
import HeraldRelay
import HeraldTesting
import Logging
import Testing

/// The real providers, over AsyncHTTPClient (HTTP/2 and TLS for APNs), against the local fakes.
@Suite(.serialized) struct FakeProviderTests {
    typealias F = RelayFixtures

    @Test func apnsOverHTTP2AndTLSAgainstTheFake() async throws {
        let key = P256.Signing.PrivateKey()
        let fake = try FakeAPNs(
            publicKey: key.publicKey, keyID: "KEY123", teamID: "TEAM45", topic: "org.example.herald")
        try await fake.start()
        defer { fake.stop() }
        let caFile = NSTemporaryDirectory() + "fake-apns-\(UUID().uuidString).pem"
        try fake.certificate.writeCertificate(to: caFile)
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        // Longer than the slow answer's delay below.
        let transport = try AsyncHTTPClientTransport(caFile: caFile, timeout: .seconds(30))
        let tokens = APNsTokenAuthority(
            key: key, keyID: "KEY123", teamID: "TEAM45", clock: { Int64(Date().timeIntervalSince1970) })
        let provider = APNsProvider(
            transport: transport, tokens: tokens, topic: "org.example.herald", productionHost: fake.url,
            sandboxHost: fake.url, logger: Logger(label: "test"))

        #expect(await provider.deliver(F.push()) == .sent)
        #expect(await provider.deliver(F.push(content: .notification(F.content(.secret)))) == .sent)
        fake.enqueue(
            .reject(status: 410, reason: "Unregistered"),
            .reject(status: 503, reason: "ServiceUnavailable", retryAfter: 9))
        #expect(await provider.deliver(F.push()) == .deadToken(reason: "APNs 410 Unregistered"))
        #expect(await provider.deliver(F.push()) == .retryable(reason: "APNs 503 ServiceUnavailable", retryAfter: 9))
        fake.enqueue(.drop)
        guard case .retryable = await provider.deliver(F.push()) else {
            Issue.record("a dropped connection is retried")
            return
        }
        // The pool may try the dropped connection once more before it notices; then a new one works.
        var afterDrop: [PushDelivery] = []
        for _ in 0..<3 where afterDrop.last != .sent { afterDrop.append(await provider.deliver(F.push())) }
        #expect(afterDrop.last == .sent, "a new connection after the drop: \(afterDrop)")

        // Many streams on one connection: a slow answer does not hold up the next send. (Order, not
        // time, is checked: the fast send must finish while the slow one is still waiting. The wait is
        // long because on a loaded machine the fast send alone has taken over 2.7 s.)
        fake.enqueue(.delay(milliseconds: 10_000, then: .accept))
        let slowDone = ScriptedTransportState.Counter()
        async let slow: PushDelivery = {
            let outcome = await provider.deliver(F.push())
            _ = slowDone.increment()
            return outcome
        }()
        try await Task.sleep(for: .milliseconds(300))
        #expect(await provider.deliver(F.push()) == .sent)
        #expect(slowDone.increment() == 1, "the second send finished first")
        #expect(await slow == .sent)

        let received = fake.received
        #expect(received.count >= 6)
        #expect(received.allSatisfy { $0.problems.isEmpty }, "\(received.map(\.problems))")
        #expect(received.allSatisfy { $0.http2 }, "every request on HTTP/2")
        #expect(received[0].tokenClaims?["iss"] == .string("TEAM45"))
        #expect(received[0].headers["apns-topic"] == "org.example.herald")
        #expect(received[1].json?["secret"] == .string("00aa"))
        #expect(await tokens.minted == 1, "one provider token shared by every request")
        try await transport.shutdown()
    }

    /// The FCM fake, started, and a provider sending to it over AsyncHTTPClient.
    struct FCMSetup {
        let fake: FakeFCM
        let transport: AsyncHTTPClientTransport
        let provider: FCMProvider

        init(clock: (@Sendable () -> Int64)? = nil) async throws {
            fake = try FakeFCM()
            try await fake.start()
            let account = try ServiceAccount(json: fake.serviceAccountJSON)
            transport = try AsyncHTTPClientTransport(timeout: .seconds(10))
            provider = FCMProvider(
                transport: transport, tokens: FCMAccessTokens(account: account, transport: transport),
                projectID: account.projectID, endpoint: fake.url, clock: clock, logger: Logger(label: "test"))
        }
    }

    @Test func fcmAndItsTokenEndpointAgainstTheFake() async throws {
        let setup = try await FCMSetup()
        let (fake, transport, provider) = (setup.fake, setup.transport, setup.provider)
        defer { fake.stop() }
        let push = F.push(platform: .android, token: "fcm:" + String(repeating: "A1", count: 40))
        #expect(await provider.deliver(push) == .sent)
        #expect(
            await provider.deliver(
                F.push(platform: .android, token: push.deviceToken, content: .notification(F.content(.secret))))
                == .sent)
        #expect(fake.grantCount == 1, "one access token for both")
        fake.enqueue(.reject(status: 404, reason: "UNREGISTERED"))
        #expect(await provider.deliver(push) == .deadToken(reason: "FCM 404 NOT_FOUND UNREGISTERED"))
        fake.revokeTokens()
        guard case .retryable = await provider.deliver(push) else {
            Issue.record("a revoked token is a 401, retried")
            return
        }
        #expect(await provider.deliver(push) == .sent, "a fresh token after the 401")
        #expect(fake.grantCount == 2)
        let received = fake.received
        #expect(received.allSatisfy { $0.problems.isEmpty }, "\(received.map(\.problems))")
        #expect(received.first?.message?["data"]?["amsg"] == .string("Pay 0.1 ETH"))
        #expect(received[1].message?["data"]?["secret"] == .string("00aa"))
        try await transport.shutdown()
    }
}
