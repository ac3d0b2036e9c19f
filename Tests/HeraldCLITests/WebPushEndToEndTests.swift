import Crypto
import Foundation
import HeraldCore
import HeraldTesting
import Testing

/// docs/protocol.md §9 end to end: `herald serve` with a VAPID key in front of the fake Web Push service,
/// `herald webpush subscribe` and `herald inbox ingest --webpush` playing the browser or UnifiedPush app,
/// reading what the fake received.
@Suite(.serialized) struct WebPushEndToEndTests {
    static let channelKey = try! PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")

    /// The fake, a VAPID key made by `herald webpush keygen`, a server for them, and a subscriber home
    /// whose wallet follows the test channel.
    final class Setup: @unchecked Sendable {
        let folder = NSTemporaryDirectory() + "herald-webpush-\(UUID().uuidString)"
        let fake: FakeWebPush
        var server: ServerProcess
        let cli: CLIRunner
        let database: String
        let vapidPublicKey: String
        private let dropDatabase: @Sendable () -> Void

        init(_ backend: TestBackend = .sqlite, allowLoopback: Bool = true, logLevel: String = "warning") async throws {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            fake = try FakeWebPush()
            try await fake.start()
            try fake.certificate.writeCertificate(to: folder + "/ca.pem")
            cli = try CLIRunner()
            let keygen = try cli.run(["webpush", "keygen", "--out", folder + "/vapid.pem"])
            #expect(keygen.status == 0, "\(keygen.stderr)")
            vapidPublicKey = keygen.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let made = try backend.make("webpush")
            database = made.database
            dropDatabase = made.drop
            server = try ServerProcess(
                databasePath: database, extraArguments: Self.arguments(folder, allowLoopback), logLevel: logLevel)
            try await server.start()
            #expect(try cli.run(["wallet", "create", "--light"]).status == 0)
            let channel = WebPushEndToEndTests.channelKey.address.checksummed
            #expect(try cli.run(["channel", "add", channel, "--name", "Desk", "--database", database]).status == 0)
            #expect(try cli.run(["subscribe", channel, "--server", server.baseURL]).status == 0)
        }

        static func arguments(_ folder: String, _ allowLoopback: Bool) -> [String] {
            [
                "--webpush-vapid-key-file", folder + "/vapid.pem", "--webpush-subject", "mailto:ops@example.org",
                "--webpush-ca-file", folder + "/ca.pem",
            ] + (allowLoopback ? ["--webpush-allow-network", "127.0.0.0/8", "--webpush-allow-network", "::1/128"] : [])
        }

        var address: EthereumAddress { get throws { try cli.walletAddress } }

        func subscribe(_ path: String) throws -> JSONValue {
            let output = try cli.run([
                "webpush", "subscribe", "--server", server.baseURL, "--endpoint", fake.endpoint(path), "--json",
            ])
            #expect(output.status == 0, "\(output.stderr)")
            return try JSONParser.parse(output.stdout)
        }

        /// `herald inbox ingest --webpush --json` of a body as the fake received it.
        func ingest(_ body: [UInt8]) throws -> CLIRunner.Output {
            let file = folder + "/body-\(UUID().uuidString)"
            try Data(body).write(to: URL(fileURLWithPath: file))
            return try cli.run(["inbox", "ingest", file, "--webpush", "--json"])
        }

        @discardableResult
        func send(_ payload: String) async throws -> [String] {
            try await ChannelSender.send(payload, as: WebPushEndToEndTests.channelKey, to: server.baseURL)
        }

        /// The channel's view of one item's pushes (`GET /v1/notifications/{sid}`).
        func pushes(_ sid: String) async throws -> [JSONValue] {
            let now = UInt64(Date().timeIntervalSince1970)
            let header = try FeedAccess(
                wallet: WebPushEndToEndTests.channelKey.address, audience: "herald-test", issuedAt: UInt256(now - 5),
                expiresAt: UInt256(now + 120)
            ).signed(with: WebPushEndToEndTests.channelKey, scheme: .eip712, domain: HeraldDomain(chainId: 1))
                .authorizationHeader
            let (_, data) = try await HTTP.get(server.baseURL + "/v1/notifications/\(sid)", authorization: header)
            guard case .array(let pushes)? = try JSONParser.parse(Array(data))["pushes"] else { return [] }
            return pushes
        }

        func finish() {
            server.kill(SIGKILL)
            fake.stop()
            cli.cleanUp()
            try? FileManager.default.removeItem(atPath: folder)
            dropDatabase()
        }
    }

    @Test(arguments: TestBackend.available)
    func setupTypeThreeTwoAndOneArriveWithTheirHeadersAndDecryptIntoTheInbox(_ backend: TestBackend) async throws {
        let setup = try await Setup(backend)
        defer { setup.finish() }
        let info = try JSONParser.parse(Array(try await HTTP.get(setup.server.baseURL + "/v1/info").1))
        #expect(info["vapidPublicKey"]?.stringValue == setup.vapidPublicKey && setup.vapidPublicKey.count == 87)
        #expect(info["platforms"]?.jsonText.contains("webpush") == true)

        // UnifiedPush endpoints end in ?up=1: the endpoint is used exactly as given, query included.
        let subscribed = try setup.subscribe("/up/abc?up=1")
        #expect(subscribed["status"] == .string("registered") && subscribed["wallet"]?.stringValue != nil)
        let target = "/up/abc?up=1"
        let book = setup.cli.home.appendingPathComponent("webpush.json").path
        #expect((try FileManager.default.attributesOfItem(atPath: book)[.posixPermissions] as? Int) == 0o600)
        let listed = try setup.cli.run(["webpush", "list", "--json"])
        #expect(
            listed.stdout.contains(subscribed["p256dh"]?.stringValue ?? "-") && !listed.stdout.contains("privateKey"))

        #expect(try await eventually { setup.fake.received(target: target).count == 1 })
        let confirmation = try #require(setup.fake.received(target: target).first)
        #expect(confirmation.problems.isEmpty, "\(confirmation.problems)")
        #expect(confirmation.headers["urgency"] == "normal")
        #expect(confirmation.vapidClaims?["sub"] == .string("mailto:ops@example.org"))
        #expect(confirmation.headers["authorization"]?.hasSuffix(",k=" + setup.vapidPublicKey) == true)
        let setupRead = try setup.ingest(confirmation.body)
        #expect(setupRead.status == 0, "\(setupRead.stderr)")
        let setupPayload = try JSONParser.parse(setupRead.stdout)
        #expect(setupPayload["data"]?["type"] == .string("setup"))
        #expect(setupPayload["notification"]?["body"] == .string("Notifications are on for this device."))

        let address = try setup.address
        let draft = NotificationDraft(title: "Trade accepted", body: "Offer 17", message: "Pay 0.1 ETH/2 h é")
        let targeted = try await setup.send(draft.targetedPayload(to: [address]))
        let (_, keyAnswer) = try await HTTP.get(setup.server.baseURL + "/v1/users/\(address.checksummed)/pubkey")
        let publicKey = try PublicKey(
            hex: try #require(try JSONParser.parse(Array(keyAnswer))["publicKey"]?.stringValue))
        let secret = try await setup.send(draft.secretPayload(to: [(address, publicKey)]))
        let broadcast = try await setup.send(NotificationDraft(title: "Maintenance", body: "Sunday").broadcastPayload())
        #expect(try await eventually { setup.fake.received(target: target).count == 4 })
        let received = setup.fake.received(target: target)
        #expect(received.allSatisfy { $0.problems.isEmpty }, "\(received.map(\.problems))")

        var payloads: [String: JSONValue] = [:]
        for push in received.dropFirst() {
            let ttl = Int(push.headers["ttl"] ?? "") ?? -1
            #expect(ttl > 86_000 && ttl <= 86_400)
            let read = try setup.ingest(push.body)
            #expect(read.status == 0, "\(read.stderr)")
            let payload = try JSONParser.parse(read.stdout)
            if let sid = payload["data"]?["sid"]?.stringValue {
                payloads[sid] = payload
                #expect(push.headers["urgency"] == (sid == broadcast[0] ? "normal" : "high"))
            }
        }
        #expect(payloads[targeted[0]]?["data"]?["amsg"] == .string("Pay 0.1 ETH/2 h é"))
        #expect(payloads[targeted[0]]?["data"]?["type"] == .string("3"))
        // Type 2: the generic text, the message only in encrypted fields.
        let two = try #require(payloads[secret[0]])
        #expect(two["notification"]?["title"] == .string("Desk has sent you a secret message!"))
        #expect(two["data"]?["secret"]?.stringValue?.isEmpty == false)
        #expect(two.jsonText.contains("Pay 0.1") == false && two.jsonText.contains("Trade accepted") == false)
        #expect(payloads[broadcast[0]]?["data"]?["type"] == .string("1"))

        let inbox = try setup.cli.run(["inbox", "list", "--json"])
        guard case .array(let rows) = try JSONParser.parse(inbox.stdout) else {
            Issue.record("inbox list printed \(inbox.stdout) \(inbox.stderr)")
            return
        }
        #expect(Set(rows.compactMap { $0["sid"]?.jsonText }) == Set(targeted + secret + broadcast))
        // Ingesting again caches nothing twice; a body for no kept subscription exits 65.
        #expect(try setup.ingest(received[1].body).status == 0)
        var foreign = received[1].body
        foreign[foreign.count - 1] ^= 1
        #expect(try setup.ingest(foreign).status == 65)
    }

    /// For many UnifiedPush distributors the endpoint's path is the topic: whoever reads it can push.
    @Test func theLogNamesEndpointsByTheirOriginNeverByTheirPath() async throws {
        let setup = try await Setup(logLevel: "debug")
        defer { setup.finish() }
        let topic = "secrettopic" + UUID().uuidString.prefix(8)
        let target = "/up/\(topic)?up=1"
        _ = try setup.subscribe(target)
        #expect(try await eventually { setup.fake.received(target: target).count == 1 })
        let address = try setup.address
        _ = try await setup.send(NotificationDraft(title: "One", body: "b").targetedPayload(to: [address]))
        #expect(try await eventually { setup.fake.received(target: target).count == 2 })
        let log = setup.server.log
        #expect(log.contains("https://localhost:\(setup.fake.port)"), "the debug log names no endpoint at all")
        // Not even a prefix of the path: the origin is all a log line may hold.
        #expect(!log.contains("secrettopic") && !log.contains(topic), "the log holds the endpoint's path")
        #expect(!log.contains("https://localhost:\(setup.fake.port)/"), "the log holds more than the origin")
    }

    @Test func deadEndpointsArePrunedRetriesDeliverOnceAndOtherAnswersKeepTheBinding() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let paths = ["/gone404", "/gone410", "/busy", "/forbidden", "/moved"]
        for path in paths { _ = try setup.subscribe(path) }
        #expect(try await eventually { paths.allSatisfy { setup.fake.received(target: $0).count == 1 } })
        setup.fake.answer("/gone404", with: .status(404))
        setup.fake.answer("/gone410", with: .status(410))
        setup.fake.answer("/busy", with: .status(429, retryAfter: "1"))
        setup.fake.answer("/forbidden", with: .status(403))
        setup.fake.answer("/moved", with: .redirect(status: 301, location: setup.fake.endpoint("/elsewhere")))
        let address = try setup.address
        let first = try await setup.send(NotificationDraft(title: "One", body: "b").targetedPayload(to: [address]))
        #expect(try await eventually { setup.fake.received(target: "/busy").count == 3 })
        let settled = try await eventually {
            let statuses = try await setup.pushes(first[0]).compactMap { $0["status"]?.stringValue }
            return statuses.count == 5 && !statuses.contains("queued")
        }
        #expect(settled)
        let statuses = try await setup.pushes(first[0]).compactMap { $0["status"]?.stringValue }.sorted()
        #expect(statuses == ["failed", "failed", "pruned", "pruned", "sent"])
        #expect(setup.fake.received(target: "/elsewhere").isEmpty, "a redirect was followed")

        // The second notification: the dead endpoints are gone, 403 and the redirect kept their bindings.
        _ = try await setup.send(NotificationDraft(title: "Two", body: "b").targetedPayload(to: [address]))
        #expect(
            try await eventually {
                setup.fake.received(target: "/busy").count == 4
                    && ["/forbidden", "/moved"].allSatisfy { setup.fake.received(target: $0).count == 3 }
            })
        #expect(
            setup.fake.received(target: "/gone404").count == 2 && setup.fake.received(target: "/gone410").count == 2)
    }

    @Test func refusedNetworksAreRefusedAtRegistrationAndAtSendTime() async throws {
        let setup = try await Setup(allowLoopback: false)
        defer { setup.finish() }
        // An IP literal in a refused range: 400 invalid_subscription, and nothing kept.
        let literal = try setup.cli.run([
            "webpush", "subscribe", "--server", setup.server.baseURL, "--endpoint",
            setup.fake.endpoint("/x", host: "127.0.0.1"),
        ])
        #expect(literal.status == 3 && literal.stderr.contains("invalid_subscription"), "\(literal.stderr)")
        #expect(try setup.cli.run(["webpush", "list", "--json"]).stdout.contains("127.0.0.1") == false)
        // A name is judged when resolved: localhost is loopback, so its pushes fail and nothing is sent.
        _ = try setup.subscribe("/named")
        let address = try setup.address
        let sids = try await setup.send(NotificationDraft(title: "t", body: "b").targetedPayload(to: [address]))
        #expect(
            try await eventually {
                try await setup.pushes(sids[0]).first?["status"]?.stringValue == "failed"
            })
        let reason = try await setup.pushes(sids[0]).first?["lastError"]?.stringValue ?? ""
        #expect(reason.contains("127.0.0.0/8"), "\(reason)")
        #expect(setup.fake.received.isEmpty)
    }

    @Test func reRegisteringWithNewKeysMakesTheOldKeysUseless() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let old = try setup.subscribe("/rekey")
        let book = setup.cli.home.appendingPathComponent("webpush.json")
        let oldBook = try JSONParser.parse(Array(try Data(contentsOf: book)))
        let new = try setup.subscribe("/rekey")
        #expect(old["p256dh"] != new["p256dh"] && old["auth"] != new["auth"])
        let address = try setup.address
        _ = try await setup.send(NotificationDraft(title: "t", body: "b").targetedPayload(to: [address]))
        // Two setup confirmations? No: the second register refreshed the binding. One confirmation, one item.
        #expect(try await eventually { setup.fake.received(target: "/rekey").count == 2 })
        let body = try #require(setup.fake.received(target: "/rekey").last?.body)
        guard case .array(let entries)? = oldBook["subscriptions"], let entry = entries.first,
            let raw = entry["privateKey"]?.stringValue.flatMap(Base64URL.decode),
            let oldAuth = entry["auth"]?.stringValue.flatMap(Base64URL.decode)
        else {
            Issue.record("webpush.json has no subscription: \(oldBook.jsonText.count) bytes")
            return
        }
        let oldKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: raw)
        #expect(throws: WebPushCipher.Failure.self) {
            try WebPushCipher.decrypt(body, privateKey: oldKey, authSecret: oldAuth)
        }
        #expect(try setup.ingest(body).status == 0)
    }

    @Test func aSIGKILLLosesNoQueuedWebPush() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        _ = try setup.subscribe("/durable")
        #expect(try await eventually { setup.fake.received(target: "/durable").count == 1 })
        // The push service goes away; the notifications are acknowledged and queued, then the server dies.
        let port = setup.fake.port
        await setup.fake.stopAndWait()
        let address = try setup.address
        var sids: [String] = []
        for index in 0..<5 {
            sids += try await setup.send(
                NotificationDraft(title: "n\(index)", body: "b").targetedPayload(to: [address]))
        }
        setup.server.kill(SIGKILL)
        _ = try await setup.server.waitForExit()
        try await setup.fake.start(port: port)
        setup.server = try ServerProcess(
            databasePath: setup.database, extraArguments: Setup.arguments(setup.folder, true))
        try await setup.server.start()
        #expect(try await eventually(30) { setup.fake.received(target: "/durable").count >= 6 })
        var delivered: Set<String> = []
        for push in setup.fake.received(target: "/durable").dropFirst() {
            let read = try setup.ingest(push.body)
            #expect(read.status == 0, "\(read.stderr)")
            if let sid = try JSONParser.parse(read.stdout)["data"]?["sid"]?.stringValue { delivered.insert(sid) }
        }
        #expect(delivered == Set(sids))
    }
}
