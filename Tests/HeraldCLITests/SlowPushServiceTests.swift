import Crypto
import Foundation
import GRDB
import HeraldCore
import HeraldTesting
import Testing

/// docs/protocol.md §4.3 and §9 against slow push services, with real `herald serve` processes: a
/// tarpit origin (connections accepted, never answered) holds only its own share of the Web Push lane,
/// and a send that outlives its lease is not sent a second time meanwhile.
@Suite(.serialized) struct SlowPushServiceTests {
    /// 60 bindings on a tarpit origin, then one on the fake Web Push service: the normal one's setup
    /// confirmation arrives within 5 s. The lane is 50 sends here, so that without the per-origin cap
    /// the tarpit alone would fill it for the sends' whole timeout.
    @Test func aTarpitOriginCannotHoldUpAnotherOriginsPushes() async throws {
        let setup = try await WebPushEndToEndTests.Setup()
        defer { setup.finish() }
        setup.server.kill(SIGKILL)
        _ = try await setup.server.waitForExit()
        setup.server = try ServerProcess(
            databasePath: setup.database,
            extraArguments: WebPushEndToEndTests.Setup.arguments(setup.folder, true) + [
                "--push-concurrency", "50", "--max-bindings", "100", "--webpush-origin-concurrency", "8",
            ])
        try await setup.server.start()
        let tarpit = SilentListener()
        let port = try await tarpit.start()
        defer { Task { await tarpit.stop() } }

        let key = PrivateKey.generate()
        let keys = P256.KeyAgreement.PrivateKey()
        let p256dh = Base64URL.encode(Array(keys.publicKey.x963Representation))
        let auth = Base64URL.encode(SecureRandom.bytes(16))
        func register(_ endpoint: String, nonce: UInt64) async throws -> Int {
            let now = UInt64(Date().timeIntervalSince1970)
            let binding = WebPushBinding(
                action: .register, wallet: key.address, endpoint: endpoint, p256dh: p256dh, auth: auth,
                audience: "herald-test", nonce: UInt256(nonce), issuedAt: UInt256(now - 5),
                expiresAt: UInt256(now + 300))
            let body = try binding.signed(with: key, scheme: .eip712, domain: HeraldDomain(chainId: 1)).jsonText
            return try await HTTP.post(setup.server.baseURL + "/v1/webpush", json: body).0
        }
        for index in 0..<60 {
            #expect(try await register("https://127.0.0.1:\(port)/tarpit/\(index)", nonce: UInt64(index)) == 200)
        }
        // The tarpit's confirmations are under way (or deferred) when the normal binding comes.
        try await Task.sleep(for: .seconds(1))
        let started = Date()
        #expect(try await register(setup.fake.endpoint("/normal"), nonce: 1_000) == 200)
        let arrived = try await eventually(5) { !setup.fake.received(target: "/normal").isEmpty }
        let took = Date().timeIntervalSince(started)
        print("tarpit: the normal binding's confirmation arrived after \(String(format: "%.2f", took)) s")
        #expect(arrived, "the normal push arrived within 5 s")
        #expect(setup.server.process.isRunning)
    }

    /// The fake APNs answers after 9 s, the lease is 5 s and one attempt is allowed: the send is given up
    /// before its lease ends, so no second claim sends it again: exactly one request reaches APNs.
    @Test func aSendThatOutlivesItsLeaseReachesTheServiceOnce() async throws {
        let folder = NSTemporaryDirectory() + "herald-lease-\(UUID().uuidString)"
        let apns = try await APNsFixture(folder: folder)
        let cli = try CLIRunner()
        let server = try ServerProcess(
            databasePath: folder + "/herald.sqlite",
            extraArguments: ["--push-lease", "5", "--push-attempts", "1"] + apns.serverArguments)
        defer {
            server.kill(SIGKILL)
            apns.fake.stop()
            cli.cleanUp()
            try? FileManager.default.removeItem(atPath: folder)
        }
        try await server.start()
        apns.fake.enqueue(.delay(milliseconds: 9_000, then: .accept))
        #expect(try cli.run(["wallet", "create", "--light"]).status == 0)
        let registered = try cli.run([
            "register", "--server", server.baseURL, "--platform", "ios", "--device-token",
            String(repeating: "e5", count: 32),
        ])
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(try await eventually { apns.fake.received.count == 1 })
        // Past the lease and past the fake's answer: still the one request.
        try await Task.sleep(for: .seconds(11))
        #expect(apns.fake.received.count == 1)
        let queue = try DatabaseQueue(path: folder + "/herald.sqlite")
        defer { try? queue.close() }
        let outcome = try queue.read { try Row.fetchOne($0, sql: "SELECT status, last_error FROM push_outbox") }
        #expect(outcome?["status"] == "failed")
        #expect(
            (outcome?["last_error"] as String?)?.contains("no answer within 3 s") == true,
            "\(String(describing: outcome))")
    }
}
