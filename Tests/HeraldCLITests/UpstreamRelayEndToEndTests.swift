import Foundation
import GRDB
import HeraldCore
import HeraldTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// PROTOCOL §7 with three real processes: a downstream `herald serve` without push credentials, an
/// upstream `herald serve` holding them (for the fake APNs and FCM), and the fakes.
@Suite(.serialized) struct UpstreamRelayEndToEndTests {
    static let channelKey = try! PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
    static let iosToken = String(repeating: "c3", count: 32)
    static let androidToken = "fcm:" + String(repeating: "Up9_", count: 12)

    final class Setup: @unchecked Sendable {
        let folder = NSTemporaryDirectory() + "herald-upstream-\(UUID().uuidString)"
        let apnsFixture: APNsFixture
        var apns: FakeAPNs { apnsFixture.fake }
        let fcm: FakeFCM
        let upstream: ServerProcess
        let downstream: ServerProcess
        let subscriber: CLIRunner
        let installationID: String
        let installationKey: String
        let upstreamFolder: String
        let downstreamDatabase: String

        init() async throws {
            upstreamFolder = folder + "/upstream"
            downstreamDatabase = folder + "/downstream/herald.sqlite"
            apnsFixture = try await APNsFixture(folder: folder)
            fcm = try FakeFCM()
            try await fcm.start()
            try Data(fcm.serviceAccountJSON).write(to: URL(fileURLWithPath: folder + "/service-account.json"))
            subscriber = try CLIRunner()
            let upstreamDatabase = folder + "/upstream/herald.sqlite"
            try FileManager.default.createDirectory(atPath: folder + "/upstream", withIntermediateDirectories: true)
            let added = try subscriber.run([
                "installation", "add", "--name", "Downstream", "--json", "--database", upstreamDatabase,
            ])
            #expect(added.status == 0, "\(added.stderr)")
            let created = try JSONParser.parse(Array(added.stdout.utf8))
            installationID = try #require(created["id"]?.stringValue)
            installationKey = try #require(created["key"]?.stringValue)
            let keyFile = folder + "/installation.key"
            try Data((installationKey + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))

            // The upstream logs everything it would (debug), so that the test below sees all of it.
            upstream = try ServerProcess(
                databasePath: upstreamDatabase,
                extraArguments: apnsFixture.serverArguments + [
                    "--fcm-service-account", folder + "/service-account.json", "--fcm-endpoint", fcm.url,
                ], logLevel: "debug")
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

        var subscriberAddress: EthereumAddress {
            get throws {
                try EthereumAddress(
                    parsing: try subscriber.run(["wallet", "address"]).stdout.trimmingCharacters(
                        in: .whitespacesAndNewlines))
            }
        }

        /// Sends as the channel to the downstream; returns the sids.
        func send(_ payload: String) async throws -> [String] {
            let now = UInt64(Date().timeIntervalSince1970)
            let operation = NotificationOperation(
                channel: UpstreamRelayEndToEndTests.channelKey.address, payload: payload, audience: "herald-test",
                nonce: try UInt256(bigEndian: SecureRandom.bytes(16)), issuedAt: UInt256(now - 5),
                expiresAt: UInt256(now + 120))
            let body = try operation.signed(
                with: UpstreamRelayEndToEndTests.channelKey, scheme: .eip712, domain: HeraldDomain(chainId: 1))
            let (status, answer) = try await HTTP.post(downstream.baseURL + "/v1/notifications", json: body.jsonText)
            #expect(status == 202, "\(String(decoding: answer, as: UTF8.self))")
            guard case .array(let sids)? = try JSONParser.parse(Array(answer))["sid"] else { return [] }
            return sids.compactMap(\.stringValue)
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
            apns.stop()
            fcm.stop()
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
        var request = URLRequest(url: URL(string: setup.upstream.baseURL + "/v1/relay/usage")!)
        request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
        let (counts, _) = try await HTTP.session.data(for: request)
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
}
