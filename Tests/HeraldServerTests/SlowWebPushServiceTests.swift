import Crypto
import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTesting
import Logging
import Testing

@testable import HeraldRelay

/// docs/protocol.md §9 with the real outbox, the real guarded transport and real sockets: 60 bindings
/// on a tarpit origin (connections accepted, never answered), one whose name takes 10 s to resolve, and
/// one on the fake Web Push service. The normal one's push arrives within 5 s. The name's lookup is
/// the only stand-in: getaddrinfo, made slow, on the resolver's own pool and under its own timeout.
@Suite(.serialized) struct SlowWebPushServiceTests {
    @Test func aTarpitAndASlowNameCannotHoldUpAnotherOriginsPush() async throws {
        let fixture = try ServerFixture {
            $0.push.concurrency = 50
            $0.push.setupConfirmation = true
        }
        defer { try? FileManager.default.removeItem(atPath: fixture.folder) }
        let fake = try FakeWebPush()
        try await fake.start()
        defer { fake.stop() }
        let caFile = fixture.folder + "/ca.pem"
        try FileManager.default.createDirectory(atPath: fixture.folder, withIntermediateDirectories: true)
        try fake.certificate.writeCertificate(to: caFile)
        let tarpit = SilentListener()
        let tarpitPort = try await tarpit.start()

        // Bindings, in the order their confirmations are claimed: the tarpit's, the slow name's, the normal one.
        let keys = P256.KeyAgreement.PrivateKey()
        func bind(_ endpoint: String, nonce: UInt64) async throws {
            let subscription = WebPushSubscription(
                storedEndpoint: endpoint, p256dh: Base64URL.encode(Array(keys.publicKey.x963Representation)),
                auth: Base64URL.encode(SecureRandom.bytes(16)))
            _ = try await fixture.state.store.apply(
                DeviceChange(
                    action: .register, wallet: ServerFixture.key.address, platform: .webpush, deviceToken: endpoint,
                    publicKey: ServerFixture.key.publicKey, nonce: UInt256(nonce),
                    operation: .random(), nonceRetainedUntil: ServerFixture.now + 600, now: ServerFixture.now,
                    maxBindingsPerWallet: 100,
                    queueSetupConfirmation: true, webPush: subscription))
        }
        for index in 0..<60 { try await bind("https://127.0.0.1:\(tarpitPort)/tarpit/\(index)", nonce: UInt64(index)) }
        try await bind("https://slow.test:\(fake.port)/slow", nonce: 100)
        try await bind(fake.endpoint("/normal"), nonce: 101)

        let resolver = SystemHostResolver(timeout: .seconds(5)) { host in
            if host == "slow.test" {
                Thread.sleep(forTimeInterval: 10)
                return [[127, 0, 0, 1]]
            }
            return try SystemHostResolver.lookup(host)
        }
        let transport = try GuardedWebPushTransport(
            policy: WebPushNetworkPolicy(allowed: [
                try #require(IPNetwork("127.0.0.0/8")), try #require(IPNetwork("::1/128")),
            ]),
            resolver: CachingHostResolver(resolver), caFile: caFile)
        let provider = WebPushProvider(
            transport: transport,
            tokens: VAPIDTokens(
                key: VAPIDKey(privateKey: P256.Signing.PrivateKey()), subject: "mailto:ops@example.org"),
            originConcurrency: 8, logger: Logger(label: "test"))
        let service = PushOutboxService(
            state: fixture.state, providers: PushProviders(webpush: provider, logger: Logger(label: "test")))

        let started = ContinuousClock.now
        let running = Task { try await service.run() }
        defer { running.cancel() }
        var arrived = false
        while !arrived && ContinuousClock.now - started < .seconds(5) {
            arrived = !fake.received(target: "/normal").isEmpty
            try await Task.sleep(for: .milliseconds(20))
        }
        print("tarpit (in process): the normal push arrived after \(ContinuousClock.now - started)")
        #expect(arrived, "the normal push arrived within 5 s")
        await tarpit.stop()
    }
}
