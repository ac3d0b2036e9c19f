import Foundation
import GRDB
import HeraldCore
import HeraldTesting
import Testing

/// docs/protocol.md §7 with three real processes: a downstream `herald serve` without push credentials, an
/// upstream `herald serve` holding them (for the fake APNs and FCM), and the fakes.
@Suite(.serialized) struct UpstreamRelayEndToEndTests {
    static let channelKey = try! PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
    static let iosToken = String(repeating: "c3", count: 32)
    static let androidToken = "fcm:" + String(repeating: "Up9_", count: 12)

    final class Setup: @unchecked Sendable {
        let folder = NSTemporaryDirectory() + "herald-upstream-\(UUID().uuidString)"
        let fakes: PushFakes
        var apns: FakeAPNs { fakes.apns }
        var fcm: FakeFCM { fakes.fcm }
        var upstream: ServerProcess
        let upstreamArguments: [String]
        let upstreamDatabase: String
        let downstream: ServerProcess
        let subscriber: CLIRunner
        let installationID: String
        let installationKey: String
        let upstreamFolder: String
        let downstreamDatabase: String

        init(rate: Int = 100) async throws {
            upstreamFolder = folder + "/upstream"
            downstreamDatabase = folder + "/downstream/herald.sqlite"
            fakes = try await PushFakes(folder: folder)
            subscriber = try CLIRunner()
            upstreamDatabase = folder + "/upstream/herald.sqlite"
            try FileManager.default.createDirectory(atPath: folder + "/upstream", withIntermediateDirectories: true)
            let added = try subscriber.run([
                "installation", "add", "--name", "Downstream", "--rate", String(rate), "--json", "--database",
                upstreamDatabase,
            ])
            #expect(added.status == 0, "\(added.stderr)")
            let created = try JSONParser.parse(Array(added.stdout.utf8))
            installationID = try #require(created["id"]?.stringValue)
            installationKey = try #require(created["key"]?.stringValue)
            let keyFile = folder + "/installation.key"
            try Data((installationKey + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))

            // The upstream logs everything it would (debug), so that the test below sees all of it.
            upstreamArguments = fakes.serverArguments
            upstream = try ServerProcess(
                databasePath: upstreamDatabase, extraArguments: upstreamArguments, logLevel: "debug")
            try await upstream.start()
            downstream = try ServerProcess(
                databasePath: folder + "/downstream/herald.sqlite",
                extraArguments: [
                    "--upstream", upstream.baseURL, "--upstream-installation-id", installationID,
                    "--upstream-installation-key-file", keyFile,
                ])
            try await downstream.start()

            #expect(try subscriber.run(["wallet", "create", "--light"]).status == 0)
            for (platform, token) in [
                ("ios", UpstreamRelayEndToEndTests.iosToken), ("android", UpstreamRelayEndToEndTests.androidToken),
            ] {
                let registered = try subscriber.run([
                    "register", "--server", downstream.baseURL, "--platform", platform, "--device-token", token,
                ])
                #expect(registered.status == 0, "\(registered.stderr)")
            }
            let channel = UpstreamRelayEndToEndTests.channelKey.address.checksummed
            #expect(
                try subscriber.run(["channel", "add", channel, "--name", "Desk", "--database", downstreamDatabase])
                    .status == 0)
            #expect(try subscriber.run(["subscribe", channel, "--server", downstream.baseURL]).status == 0)
        }

        var subscriberAddress: EthereumAddress { get throws { try subscriber.walletAddress } }

        /// Sends as the channel to the downstream; returns the sids.
        func send(_ payload: String) async throws -> [String] {
            try await ChannelSender.send(payload, as: UpstreamRelayEndToEndTests.channelKey, to: downstream.baseURL)
        }

        /// The downstream's outbox rows of one item: (platform, status, attempts).
        func pushes(_ sid: String) async throws -> [(platform: String, status: String, attempts: Int)] {
            let queue = try DatabaseQueue(path: downstreamDatabase)
            defer { try? queue.close() }
            return try await queue.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT platform, status, attempts FROM push_outbox WHERE sid = ? ORDER BY platform",
                    arguments: [Int64(sid) ?? 0]
                ).map { (platform: $0["platform"], status: $0["status"], attempts: $0["attempts"]) }
            }
        }

        /// Requests the fakes received for one item, per platform.
        func requests(_ sid: String) -> (apns: Int, fcm: Int) {
            (
                apns.received.filter { $0.json?["sid"] == .string(sid) }.count,
                fcm.received.filter { $0.message?["data"]?["sid"] == .string(sid) }.count
            )
        }

        /// A fresh access token from the upstream.
        func accessToken() async throws -> String? {
            let (_, answer) = try await HTTP.post(
                upstream.baseURL + "/v1/relay/token",
                form: "grant_type=client_credentials&client_id=installation.\(installationID)&client_secret="
                    + installationKey)
            return try JSONParser.parse(Array(answer))["access_token"]?.stringValue
        }

        func usageStatus(_ token: String) async throws -> Int {
            try await HTTP.get(upstream.baseURL + "/v1/relay/usage", authorization: "Bearer " + token).0
        }

        func downstreamPlatforms() async throws -> [String] {
            let queue = try DatabaseQueue(path: downstreamDatabase)
            defer { try? queue.close() }
            return try await queue.read { db in
                try String.fetchAll(db, sql: "SELECT platform FROM bindings ORDER BY platform")
            }
        }

        func finish() {
            downstream.kill(SIGKILL)
            upstream.kill(SIGKILL)
            fakes.stop()
            subscriber.cleanUp()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    @Test func pushesReachTheFakesThroughTheUpstreamWhichKeepsNothingOfThem() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let subscriber = try setup.subscriberAddress
        // Setup confirmations, through the upstream.
        #expect(try await eventually { setup.apns.received.count == 1 && setup.fcm.received.count == 1 })
        #expect(setup.apns.received.first?.json?["type"] == .string("setup"))

        let draft = NotificationDraft(title: "Relayed trade", body: "Offer 23", message: "Pay 0.2 ETH by noon")
        let targeted = try await setup.send(draft.targetedPayload(to: [subscriber]))
        let (_, keyAnswer) = try await HTTP.get(
            setup.downstream.baseURL + "/v1/users/\(subscriber.checksummed)/pubkey")
        let publicKey = try PublicKey(
            hex: try #require(try JSONParser.parse(Array(keyAnswer))["publicKey"]?.stringValue))
        let secret = try await setup.send(draft.secretPayload(to: [(subscriber, publicKey)]))
        #expect(try await eventually { setup.apns.received.count == 3 && setup.fcm.received.count == 3 })

        let apns = setup.apns.received
        #expect(apns.allSatisfy { $0.problems.isEmpty && $0.deviceToken == Self.iosToken })
        let three = try #require(apns.first { $0.json?["sid"] == .string(targeted[0]) })
        #expect(three.json?["aps"]?["alert"]?["title"] == .string("Relayed trade"))
        #expect(three.json?["amsg"] == .string("Pay 0.2 ETH by noon"))
        let two = try #require(apns.first { $0.json?["sid"] == .string(secret[0]) })
        #expect(two.json?["amsg"] != .string("Pay 0.2 ETH by noon"), "type 2 stays encrypted end to end")
        #expect(two.json?["secret"]?.stringValue?.isEmpty == false)
        let fcmThree = try #require(setup.fcm.received.first { $0.message?["data"]?["sid"] == .string(targeted[0]) })
        #expect(fcmThree.message?["token"] == .string(Self.androidToken))

        // The upstream wrote no device token and no title to its database or its log.
        try await Task.sleep(for: .milliseconds(300))
        var bytes = Data(setup.upstream.log.utf8)
        for file in try FileManager.default.contentsOfDirectory(atPath: setup.upstreamFolder) {
            bytes.append(try Data(contentsOf: URL(fileURLWithPath: setup.upstreamFolder + "/" + file)))
        }
        for secret in [Self.iosToken, Self.androidToken, "Relayed trade", "Offer 23", "Pay 0.2 ETH by noon"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "the upstream kept \(secret)")
        }
        // It counted them.
        let (status, usage) = try await HTTP.post(
            setup.upstream.baseURL + "/v1/relay/token",
            form: "grant_type=client_credentials&client_id=installation."
                + setup.installationID + "&client_secret=" + setup.installationKey)
        #expect(status == 200)
        let token = try #require(try JSONParser.parse(Array(usage))["access_token"]?.stringValue)
        let (_, counts) = try await HTTP.get(
            setup.upstream.baseURL + "/v1/relay/usage", authorization: "Bearer " + token)
        #expect(try JSONParser.parse(Array(counts))["sent"] == .number("6"))
    }

    @Test func aDeadTokenAtTheFakePrunesTheBindingOnTheDownstream() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let subscriber = try setup.subscriberAddress
        #expect(try await eventually { setup.apns.received.count == 1 && setup.fcm.received.count == 1 })
        setup.apns.enqueue(.reject(status: 410, reason: "Unregistered"))
        _ = try await setup.send(NotificationDraft(title: "t", body: "b").targetedPayload(to: [subscriber]))
        #expect(try await eventually { (try? await setup.downstreamPlatforms()) == ["android"] })
    }

    @Test func aWrongKeyIsAnInvalidClient() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let (status, answer) = try await HTTP.post(
            setup.upstream.baseURL + "/v1/relay/token",
            form: "grant_type=client_credentials&client_id=installation.\(setup.installationID)&client_secret=wrong")
        #expect(status == 401)
        #expect(try JSONParser.parse(Array(answer))["error"] == .string("invalid_client"))
    }

    @Test func aFakes429IsRetriedByTheDownstreamAndDeliveredOnce() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let subscriber = try setup.subscriberAddress
        #expect(try await eventually { setup.apns.received.count == 1 && setup.fcm.received.count == 1 })
        setup.apns.enqueue(.reject(status: 429, reason: "TooManyRequests", retryAfter: 1))
        let sid = try await setup.send(NotificationDraft(title: "t", body: "b").targetedPayload(to: [subscriber]))[0]
        #expect(
            try await eventually(30) {
                try await setup.pushes(sid).allSatisfy { $0.status == "sent" }
            })
        let ios = try await setup.pushes(sid).first { $0.platform == "ios" }
        #expect(ios?.attempts == 2, "one 429, then sent")
        #expect(setup.requests(sid).apns == 2 && setup.requests(sid).fcm == 1, "delivered once each")
    }

    @Test func pushesOverTheInstallationsRateAreDeliveredLaterAndOnce() async throws {
        // A rate of 1/s: a burst of 10, and the setup confirmations took 2.
        let setup = try await Setup(rate: 1)
        defer { setup.finish() }
        let subscriber = try setup.subscriberAddress
        #expect(try await eventually { setup.apns.received.count == 1 && setup.fcm.received.count == 1 })
        // Sent at once, not one after another: under a loaded machine six `herald send` processes in a row
        // can take long enough for the bucket to refill, and then none would be over the rate.
        let sids = try await withThrowingTaskGroup(of: [String].self) { group in
            for index in 0..<6 {
                group.addTask {
                    try await setup.send(
                        NotificationDraft(title: "m\(index)", body: "b").targetedPayload(to: [subscriber]))
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(
            try await eventually(60) {
                var all: [(platform: String, status: String, attempts: Int)] = []
                for sid in sids { all += try await setup.pushes(sid) }
                return all.count == 12 && all.allSatisfy { $0.status == "sent" }
            }, "every push is sent in the end")
        var retried = 0
        for sid in sids {
            #expect(setup.requests(sid).apns == 1 && setup.requests(sid).fcm == 1, "once each: \(sid)")
            retried += try await setup.pushes(sid).filter { $0.attempts > 1 }.count
        }
        #expect(retried > 0, "some pushes were over the rate and waited")
    }

    @Test func aRemovedInstallationsTokenIsRefusedWithinAMinute() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let token = try #require(try await setup.accessToken())
        #expect(try await setup.usageStatus(token) == 200)
        let removed = try setup.subscriber.run([
            "installation", "remove", setup.installationID, "--database", setup.upstreamDatabase,
        ])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try await eventually(60) { try await setup.usageStatus(token) == 401 })
        #expect(try await setup.accessToken() == nil, "and no new token is issued")
    }

    @Test func theUpstreamRestartedMidRunLosesNothing() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let subscriber = try setup.subscriberAddress
        #expect(try await eventually { setup.apns.received.count == 1 && setup.fcm.received.count == 1 })
        let port = setup.upstream.port
        setup.upstream.kill(SIGKILL)
        _ = try await setup.upstream.waitForExit()
        var sids: [String] = []
        for index in 0..<3 {
            sids += try await setup.send(
                NotificationDraft(title: "r\(index)", body: "b").targetedPayload(to: [subscriber]))
        }
        setup.upstream = try ServerProcess(
            databasePath: setup.upstreamDatabase, extraArguments: setup.upstreamArguments, port: port)
        try await setup.upstream.start()
        #expect(
            try await eventually(60) {
                var all: [(platform: String, status: String, attempts: Int)] = []
                for sid in sids { all += try await setup.pushes(sid) }
                return all.count == 6 && all.allSatisfy { $0.status == "sent" }
            }, "every push queued while the upstream was down is sent once it is back")
        for sid in sids {
            #expect(setup.requests(sid).apns == 1 && setup.requests(sid).fcm == 1, "once each: \(sid)")
        }
    }
}
