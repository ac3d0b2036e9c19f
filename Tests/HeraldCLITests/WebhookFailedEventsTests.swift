import Foundation
import HeraldCore
import HeraldTesting
import Testing

/// docs/protocol.md §11.3's `failed` events through real processes, on both backends: the fake APNs finds a
/// token dead while three pushes of the channel's broadcasts are queued for it; each of the three ends
/// unsent (refused, or dropped with its token) and is one `failed` event at the channel's webhook.
@Suite struct WebhookFailedEventsTests {
    static func text(_ output: CLIRunner.Output) -> String {
        output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: TestBackend.available)
    func aPrunedTokenIsOneFailedEventPerDroppedPush(_ backend: TestBackend) async throws {
        let (database, drop) = try backend.make("webhook-failed")
        defer { drop() }
        let folder = NSTemporaryDirectory() + "herald-webhook-failed-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fakes = try await PushFakes(folder: folder)
        defer { fakes.stop() }
        let receiver = FakeWebhookReceiver()
        try await receiver.start()
        let server = try ServerProcess(
            databasePath: database,
            extraArguments: ["--setup-confirmation", "false", "--webhooks-allow-network", "127.0.0.1/32"]
                + fakes.serverArguments)
        try await server.start()
        defer { server.kill(SIGKILL) }
        let desk = try CLIRunner(passphrase: "desk pass")
        let phone = try CLIRunner(passphrase: "phone pass")
        defer {
            desk.cleanUp()
            phone.cleanUp()
        }
        #expect(try desk.run(["wallet", "create", "--light"]).status == 0)
        #expect(try phone.run(["wallet", "create", "--light"]).status == 0)
        let channel = Self.text(try desk.run(["wallet", "address"]))
        let wallet = Self.text(try phone.run(["wallet", "address"]))
        #expect(try desk.run(["channel", "add", channel, "--name", "Desk", "--database", database]).status == 0)
        let set = try desk.run(["webhook", "set", receiver.url, "--events", "failed", "--server", server.baseURL])
        #expect(set.status == 0, "\(set.stderr)")
        let token = String(repeating: "5d", count: 32)
        #expect(
            try phone.run(["register", "--server", server.baseURL, "--platform", "ios", "--device-token", token])
                .status == 0)
        #expect(try phone.run(["subscribe", channel, "--server", server.baseURL]).status == 0)

        // Every answer is the token's death, and comes late: all three sends are queued by the first.
        let late = FakeAnswer.delay(milliseconds: 6_000, then: .reject(status: 410, reason: "Unregistered"))
        fakes.apnsFixture.fake.enqueue(late, late, late)
        var sids: [String] = []
        for index in 0..<3 {
            let sent = try desk.run([
                "send", "--server", server.baseURL, "--broadcast", "--title", "T\(index)", "--body", "b", "--json",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            if case .array(let items)? = (try? JSONParser.parse(Array(sent.stdout.utf8)))?["sid"] {
                sids += items.compactMap(\.stringValue)
            }
        }
        #expect(sids.count == 3)
        #expect(try await eventually(30) { receiver.acceptedEvents.count >= 3 }, "\(receiver.acceptedEvents)")
        let events = receiver.acceptedEvents
        #expect(events.count == 3)
        #expect(Set(events.compactMap { $0["sid"]?.stringValue }) == Set(sids))
        #expect(events.allSatisfy { $0["event"] == .string("failed") && $0["recipient"] == .string(wallet) })
        #expect(events.allSatisfy { $0["platform"] == .string("ios") && $0["channel"] == .string(channel) })
        let reasons = events.compactMap { $0["reason"]?.stringValue }
        #expect(reasons.allSatisfy { $0.hasPrefix("APNs 410 Unregistered") || $0 == "binding removed" }, "\(reasons)")
        print("failed events (\(backend)): \(reasons)")
        await receiver.stop()
    }
}
