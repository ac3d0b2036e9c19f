import Foundation
import HeraldCore
import HeraldTesting
import Testing

/// docs/protocol.md §11.3 through a real `herald serve`: a channel sets its webhook to a local receiver (on
/// a network the operator allows), subscriptions queue events in their transactions, the receiver answers
/// 503 twice and then 200, the server is SIGKILLed while events wait, and every event arrives, in order,
/// signed by the server's webhook key.
@Suite(.serialized) struct WebhookEndToEndTests {
    static let channelKey = try! PrivateKey(hex: "0x" + String(repeating: "d4", count: 32))
    static let domain = HeraldDomain(chainId: 1)

    static func window() -> (UInt256, UInt256) {
        let now = UInt64(Date().timeIntervalSince1970)
        return (UInt256(now - 5), UInt256(now + 300))
    }

    static func webhook(_ url: String, nonce: UInt64) throws -> String {
        let (issued, expires) = window()
        return try WebhookUpdate(
            channel: channelKey.address, url: url, events: "subscribed,unsubscribed,failed", audience: "herald-test",
            nonce: UInt256(nonce), issuedAt: issued, expiresAt: expires
        ).signed(with: channelKey, scheme: .eip712, domain: domain).jsonText
    }

    static func subscribe(_ index: Int) throws -> String {
        let key = try PrivateKey(bytes: Array(repeating: 0, count: 31) + [UInt8(index + 1)])
        let (issued, expires) = window()
        return try Subscription(
            action: .subscribe, channel: channelKey.address, subscriber: key.address, audience: "herald-test",
            nonce: UInt256(1), issuedAt: issued, expiresAt: expires
        ).signed(with: key, scheme: .eip712, domain: domain).jsonText
    }

    @Test(arguments: TestBackend.available)
    func everyEventArrivesInOrderSignedThroughRefusalsAndASIGKILL(_ backend: TestBackend) async throws {
        let (database, drop) = try backend.make("webhooks")
        defer { drop() }
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(
            try cli.run([
                "channel", "add", Self.channelKey.address.checksummed, "--name", "Hooks", "--database", database,
            ]).status == 0)
        let receiver = FakeWebhookReceiver()
        receiver.enqueue([.reject(status: 503, reason: "busy"), .reject(status: 503, reason: "busy")])
        let port = try await receiver.start()
        let arguments = ["--webhooks-allow-network", "127.0.0.1/32", "--setup-confirmation", "false"]
        var server = try ServerProcess(databasePath: database, extraArguments: arguments)
        try await server.start()
        let (_, info) = try await HTTP.get(server.baseURL + "/v1/info")
        let signer = try #require((try? JSONParser.parse(Array(info)))?["webhookSigner"]?.stringValue)

        let (setStatus, setBody) = try await HTTP.post(
            server.baseURL + "/v1/webhooks", json: try Self.webhook(receiver.url, nonce: 1))
        #expect(setStatus == 200, "\(String(decoding: setBody, as: UTF8.self))")
        for index in 0..<3 {
            #expect(try await HTTP.post(server.baseURL + "/v1/subscriptions", json: try Self.subscribe(index)).0 == 200)
        }
        #expect(try await eventually(30) { receiver.acceptedEvents.count >= 3 }, "the first three events")
        #expect(receiver.deliveries.prefix(2).map(\.status) == [503, 503])

        // The receiver goes away; three more events wait in the queue; the server is killed and comes back.
        await receiver.stop()
        for index in 3..<6 {
            #expect(try await HTTP.post(server.baseURL + "/v1/subscriptions", json: try Self.subscribe(index)).0 == 200)
        }
        try await Task.sleep(for: .milliseconds(500))
        server.kill(SIGKILL)
        _ = try await server.waitForExit()
        try await receiver.start(port: port)
        server = try ServerProcess(databasePath: database, extraArguments: arguments)
        try await server.start()
        defer { server.kill(SIGKILL) }
        #expect(
            try await eventually(60) { Set(receiver.acceptedEvents.compactMap { $0["id"]?.stringValue }).count >= 6 })

        // At least once: a batch may come twice; in order, and each a subscription of the channel.
        var seen: [Int] = []
        for event in receiver.acceptedEvents {
            guard let id = event["id"]?.stringValue.flatMap(Int.init) else { continue }
            if !seen.contains(id) { seen.append(id) }
            #expect(event["event"] == .string("subscribed"))
            #expect(event["channel"] == .string(Self.channelKey.address.checksummed))
        }
        #expect(seen == seen.sorted() && seen.count == 6, "ids \(seen)")
        for delivery in receiver.deliveries {
            let signature = try RecoverableSignature(hex: try #require(delivery.signature))
            let recovered = try signature.recoverPublicKey(digest: PersonalMessage.digest(delivery.body)).address
            #expect(recovered.checksummed == signer)
        }
        print(
            "webhooks (\(backend)): \(receiver.deliveries.count) requests (\(receiver.deliveries.filter { $0.status != 200 }.count) refused), "
                + "\(seen.count) events, ids \(seen.first ?? 0)…\(seen.last ?? 0), signed by \(signer)")
        await receiver.stop()
    }

    /// `herald webhook set|remove` sign with the channel's wallet; `herald webhook verify` accepts a delivery
    /// as received and refuses it altered (exit 1) or its signature malformed (exit 65).
    @Test func theCommandsSetRemoveAndVerify() async throws {
        let folder = NSTemporaryDirectory() + "herald-webhook-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/herald.sqlite"
        let desk = try CLIRunner(passphrase: "desk passphrase")
        defer { desk.cleanUp() }
        #expect(try desk.run(["wallet", "create", "--light"]).status == 0)
        let channel = try desk.run(["wallet", "address"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try desk.run(["channel", "add", channel, "--name", "Desk", "--database", database]).status == 0)
        let receiver = FakeWebhookReceiver()
        try await receiver.start()
        let server = try ServerProcess(
            databasePath: database, extraArguments: ["--webhooks-allow-network", "127.0.0.1/32"])
        try await server.start()
        defer { server.kill(SIGKILL) }

        let refused = try desk.run(["webhook", "set", "http://192.0.2.7/hook", "--server", server.baseURL])
        #expect(refused.status == 3 && refused.stderr.contains("invalid_webhook"), "\(refused.stderr)")
        let set = try desk.run(["webhook", "set", receiver.url, "--events", "subscribed", "--server", server.baseURL])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout == "set \(receiver.url) for \(channel): subscribed\n")
        #expect(
            try await HTTP.post(server.baseURL + "/v1/subscriptions", json: try Self.subscribe(0, to: channel)).0 == 200
        )
        #expect(try await eventually(20) { !receiver.acceptedEvents.isEmpty })
        let delivery = try #require(receiver.deliveries.first)
        let signature = try #require(delivery.signature)
        let (_, info) = try await HTTP.get(server.baseURL + "/v1/info")
        let signer = try #require((try? JSONParser.parse(Array(info)))?["webhookSigner"]?.stringValue)
        let body = folder + "/body.json"
        _ = FileManager.default.createFile(atPath: body, contents: Data(delivery.body))
        let verified = try desk.run(["webhook", "verify", "--signer", signer, "--signature", signature, body])
        #expect(verified.status == 0 && verified.stdout == "valid: signed by \(signer)\n", "\(verified.stderr)")
        let json = try desk.run(
            ["webhook", "verify", "--signer", signer, "--signature", signature, "--json"],
            stdin: String(decoding: delivery.body, as: UTF8.self))
        #expect(
            json.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                == #"{"valid":true,"recovered":"\#(signer)","events":1}"#, "\(json.stderr)")
        let altered = try desk.run(
            ["webhook", "verify", "--signer", signer, "--signature", signature],
            stdin: String(decoding: delivery.body, as: UTF8.self) + " ")
        #expect(altered.status == 1, "\(altered.stdout)\(altered.stderr)")
        let malformed = try desk.run(["webhook", "verify", "--signer", signer, "--signature", "0x1234", body])
        #expect(malformed.status == 65, "\(malformed.stderr)")
        let removed = try desk.run(["webhook", "remove", "--server", server.baseURL])
        #expect(removed.status == 0 && removed.stdout == "removed: the webhook of \(channel)\n", "\(removed.stderr)")
        await receiver.stop()
    }

    static func subscribe(_ index: Int, to channel: String) throws -> String {
        let key = try PrivateKey(bytes: Array(repeating: 0, count: 31) + [UInt8(index + 1)])
        let (issued, expires) = window()
        return try Subscription(
            action: .subscribe, channel: try EthereumAddress(parsing: channel), subscriber: key.address,
            audience: "herald-test", nonce: UInt256(1), issuedAt: issued, expiresAt: expires
        ).signed(with: key, scheme: .eip712, domain: domain).jsonText
    }
}
