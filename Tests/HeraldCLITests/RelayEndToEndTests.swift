import Foundation
import GRDB
import HeraldCore
import HeraldTesting
import Testing

/// `herald serve` delivering to the local fakes of APNs and FCM, as it would to Apple and Google.
@Suite(.serialized) struct RelayEndToEndTests {
    static let channelKey = try! PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
    static let iosToken = String(repeating: "a1", count: 32)
    static let androidToken = "fcm:" + String(repeating: "Zz9_", count: 12)

    /// Both fakes, their credential files, a server configured for them, and a subscriber that follows
    /// the channel with an iOS and an Android device.
    final class Setup: @unchecked Sendable {
        let folder = NSTemporaryDirectory() + "herald-relay-\(UUID().uuidString)"
        let fakes: PushFakes
        var apnsFixture: APNsFixture { fakes.apnsFixture }
        var apns: FakeAPNs { fakes.apns }
        var fcm: FakeFCM { fakes.fcm }
        var server: ServerProcess
        let subscriber: CLIRunner
        /// A SQLite file in `folder`, or a PostgreSQL database's URL.
        let database: String
        private let dropDatabase: @Sendable () -> Void

        init(_ backend: TestBackend = .sqlite) async throws {
            fakes = try await PushFakes(folder: folder)
            if backend == .sqlite {
                database = folder + "/herald.sqlite"
                dropDatabase = {}
            } else {
                let made = try backend.make("relay")
                database = made.database
                dropDatabase = made.drop
            }
            server = try ServerProcess(databasePath: database, extraArguments: [])
            subscriber = try CLIRunner()
            server = try ServerProcess(databasePath: database, extraArguments: serverArguments)
            try await server.start()
            #expect(try subscriber.run(["wallet", "create", "--light"]).status == 0)
            for (platform, token) in [
                ("ios", RelayEndToEndTests.iosToken), ("android", RelayEndToEndTests.androidToken),
            ] {
                let registered = try subscriber.run([
                    "register", "--server", server.baseURL, "--platform", platform, "--device-token", token,
                ])
                #expect(registered.status == 0, "\(registered.stderr)")
            }
            let channel = RelayEndToEndTests.channelKey.address.checksummed
            #expect(
                try subscriber.run(["channel", "add", channel, "--name", "Desk", "--database", database]).status == 0)
            #expect(try subscriber.run(["subscribe", channel, "--server", server.baseURL]).status == 0)
        }

        var serverArguments: [String] { fakes.serverArguments }

        var subscriberAddress: EthereumAddress { get throws { try subscriber.walletAddress } }

        /// Sends as the channel; returns the sids.
        @discardableResult
        func send(_ payload: String) async throws -> [String] {
            try await ChannelSender.send(payload, as: RelayEndToEndTests.channelKey, to: server.baseURL)
        }

        /// The channel's view of one item's pushes.
        func status(_ sid: String) async throws -> JSONValue {
            let now = UInt64(Date().timeIntervalSince1970)
            let header = try FeedAccess(
                wallet: RelayEndToEndTests.channelKey.address, audience: "herald-test", issuedAt: UInt256(now - 5),
                expiresAt: UInt256(now + 120)
            ).signed(with: RelayEndToEndTests.channelKey, scheme: .eip712, domain: HeraldDomain(chainId: 1))
                .authorizationHeader
            let (_, data) = try await HTTP.get(server.baseURL + "/v1/notifications/\(sid)", authorization: header)
            return try JSONParser.parse(Array(data))
        }

        func finish() {
            server.kill(SIGKILL)
            fakes.stop()
            subscriber.cleanUp()
            try? FileManager.default.removeItem(atPath: folder)
            dropDatabase()
        }
    }

    @Test(arguments: TestBackend.available)
    func typeThreeAndTypeTwoReachBothFakesWithTheRightHeadersTokensAndBodies(_ backend: TestBackend) async throws {
        let setup = try await Setup(backend)
        defer { setup.finish() }
        let subscriber = try setup.subscriberAddress
        // Each new binding got its setup confirmation.
        #expect(try await eventually { setup.apns.received.count == 1 && setup.fcm.received.count == 1 })
        #expect(setup.apns.received.first?.json?["type"] == .string("setup"))
        #expect(setup.fcm.received.first?.message?["data"]?["type"] == .string("setup"))

        let draft = NotificationDraft(title: "Trade accepted", body: "Offer 17", message: "Pay 0.1 ETH within 2 h")
        let targeted = try await setup.send(draft.targetedPayload(to: [subscriber]))
        let (_, keyAnswer) = try await HTTP.get(setup.server.baseURL + "/v1/users/\(subscriber.checksummed)/pubkey")
        let publicKey = try PublicKey(
            hex: try #require(try JSONParser.parse(Array(keyAnswer))["publicKey"]?.stringValue))
        let secret = try await setup.send(draft.secretPayload(to: [(subscriber, publicKey)]))
        #expect(try await eventually { setup.apns.received.count == 3 && setup.fcm.received.count == 3 })

        let apns = setup.apns.received
        #expect(apns.allSatisfy { $0.problems.isEmpty && $0.http2 }, "\(apns.map(\.problems))")
        #expect(apns.allSatisfy { $0.deviceToken == Self.iosToken && $0.tokenClaims?["iss"] == .string("TEAM45") })
        let three = try #require(apns.first { $0.json?["sid"] == .string(targeted[0]) })
        #expect(three.headers["apns-push-type"] == "alert" && three.headers["apns-priority"] == "10")
        #expect(three.headers["apns-topic"] == "org.example.herald" && three.headers["apns-expiration"] != nil)
        #expect(three.json?["aps"]?["alert"]?["title"] == .string("Trade accepted"))
        #expect(three.json?["amsg"] == .string("Pay 0.1 ETH within 2 h") && three.json?["app"] == .string("Desk"))
        let two = try #require(apns.first { $0.json?["sid"] == .string(secret[0]) })
        #expect(two.json?["aps"]?["alert"]?["title"] == .string("Desk has sent you a secret message!"))
        #expect(two.json?["amsg"] != .string("Pay 0.1 ETH within 2 h"), "type 2 stays encrypted")
        #expect(two.json?["secret"]?.stringValue?.isEmpty == false)

        let fcm = setup.fcm.received
        #expect(fcm.allSatisfy { $0.problems.isEmpty }, "\(fcm.map(\.problems))")
        #expect(setup.fcm.grantCount == 1, "one OAuth token for every send")
        let fcmThree = try #require(fcm.first { $0.message?["data"]?["sid"] == .string(targeted[0]) })
        #expect(fcmThree.message?["token"] == .string(Self.androidToken))
        #expect(fcmThree.message?["notification"]?["body"] == .string("Offer 17"))
        let fcmTwo = try #require(fcm.first { $0.message?["data"]?["sid"] == .string(secret[0]) })
        #expect(fcmTwo.message?["data"]?["secret"] == two.json?["secret"])

        let report = try await setup.status(targeted[0])
        guard case .array(let pushes)? = report["pushes"] else {
            Issue.record("no pushes in \(report)")
            return
        }
        #expect(pushes.count == 2 && pushes.allSatisfy { $0["status"] == .string("sent") }, "\(report)")
    }

    @Test func a410PrunesTheBindingAndA503ThenA200DeliversOnce() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let subscriber = try setup.subscriberAddress
        #expect(try await eventually { setup.apns.received.count == 1 && setup.fcm.received.count == 1 })
        setup.apns.enqueue(.reject(status: 410, reason: "Unregistered"))
        setup.fcm.enqueue(.reject(status: 503, reason: "UNAVAILABLE"))
        let sid = try await setup.send(NotificationDraft(title: "t", body: "b").targetedPayload(to: [subscriber]))[0]
        #expect(
            try await eventually {
                guard case .array(let pushes)? = try await setup.status(sid)["pushes"] else { return false }
                return Set(pushes.compactMap { $0["status"]?.stringValue }) == ["pruned", "sent"]
            })
        let report = try await setup.status(sid)
        guard case .array(let pushes)? = report["pushes"] else { return }
        let ios = try #require(pushes.first { $0["platform"] == .string("ios") })
        #expect(ios["lastError"] == .string("APNs 410 Unregistered"))
        let android = try #require(pushes.first { $0["platform"] == .string("android") })
        #expect(android["attempts"] == .number("2"))
        #expect(android["lastError"]?.stringValue?.hasPrefix("FCM 503") == true, "\(android)")
        // Delivered once after the retry: two requests for the item, the second accepted, no third.
        #expect(setup.fcm.received.filter { $0.message?["data"]?["sid"] == .string(sid) }.count == 2)
        // The dead iOS token's binding is gone; the Android one stays.
        let queue = try DatabaseQueue(path: setup.database)
        let platforms = try await queue.read { db in try String.fetchAll(db, sql: "SELECT platform FROM bindings") }
        try queue.close()
        #expect(platforms == ["android"])
    }

    @Test func aSIGKILLWithPushesQueuedLosesNone() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let subscriber = try setup.subscriberAddress
        #expect(try await eventually { setup.apns.received.count == 1 })
        // APNs goes away: pushes wait in the outbox. The server is then killed without warning.
        let port = Int(setup.apns.url.split(separator: ":").last ?? "") ?? 0
        await setup.apns.stopAndWait()
        var sids: [String] = []
        for index in 0..<5 {
            sids += try await setup.send(
                NotificationDraft(title: "m\(index)", body: "b").targetedPayload(to: [subscriber]))
        }
        let queue = try DatabaseQueue(path: setup.database)
        let waiting = try await queue.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM push_outbox WHERE status = 'queued' AND platform = 'ios'")
        }
        try queue.close()
        #expect(waiting == 5, "the iOS pushes are queued when the server dies")
        setup.server.kill(SIGKILL)
        _ = try await setup.server.waitForExit()
        // APNs returns on the same port, and so does Herald, on the same database.
        #expect(try await eventually(10) { (try? await setup.apns.start(port: port)) != nil })
        setup.server = try ServerProcess(databasePath: setup.database, extraArguments: setup.serverArguments)
        try await setup.server.start()
        #expect(
            try await eventually(30) {
                Set(sids).isSubset(of: Set(setup.apnsFixture.deliveredSids))
            }, "every queued push arrived after the restart")
    }
}
