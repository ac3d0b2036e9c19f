import Foundation
import HeraldCore
import Testing

/// docs/protocol.md §11.4 through real processes: `herald send --priority --ttl --collapse-id` reaches the
/// fake APNs as its headers say, with the channel as the thread, and the fake FCM as `android`'s
/// priority, ttl and collapse key; a bad option never leaves the machine.
@Suite struct PushOptionsEndToEndTests {
    static func text(_ output: CLIRunner.Output) -> String {
        output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: TestBackend.available)
    func theFakeAPNsSeesTheOptionsOfASend(_ backend: TestBackend) async throws {
        let (database, drop) = try backend.make("push-options")
        defer { drop() }
        let folder = NSTemporaryDirectory() + "herald-options-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fakes = try await PushFakes(folder: folder)
        defer { fakes.stop() }
        let apns = fakes.apnsFixture
        let server = try ServerProcess(
            databasePath: database, extraArguments: ["--setup-confirmation", "false"] + fakes.serverArguments)
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
        #expect(try desk.run(["channel", "add", channel, "--name", "Prices", "--database", database]).status == 0)
        let token = String(repeating: "7c", count: 32)
        let register = ["register", "--server", server.baseURL, "--platform", "ios", "--device-token", token]
        #expect(try phone.run(register).status == 0)
        let android = ["register", "--server", server.baseURL, "--platform", "android", "--device-token"]
        #expect(try phone.run(android + [String(repeating: "f", count: 40)]).status == 0)
        #expect(try phone.run(["subscribe", channel, "--server", server.baseURL]).status == 0)
        let send = ["send", "--server", server.baseURL, "--broadcast", "--title", "ETH", "--body", "2,500 USD"]

        let bad = try desk.run(send + ["--collapse-id", "has space"])
        #expect(bad.status == 64, "\(bad.stderr)")
        let before = Int64(Date().timeIntervalSince1970)
        let sent = try desk.run(send + ["--priority", "normal", "--ttl", "600", "--collapse-id", "price-ETH"])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(try await eventually { apns.fake.received.count == 1 })
        let push = try #require(apns.fake.received.first)
        #expect(push.headers["apns-priority"] == "5")
        #expect(push.headers["apns-collapse-id"] == "price-ETH")
        let expiration = Int64(push.headers["apns-expiration"] ?? "") ?? 0
        #expect(expiration >= before + 600 && expiration <= before + 610, "apns-expiration \(expiration)")
        #expect(push.json?["aps"]?["thread-id"] == .string(channel))
        #expect(try await eventually { fakes.fcm.received.count == 1 })
        let message = try JSONParser.parse(try #require(fakes.fcm.received.first).body)["message"]
        let options = message?["android"]
        #expect(options?["priority"] == .string("normal") && options?["collapse_key"] == .string("price-ETH"))
        let ttl = options?["ttl"]?.stringValue ?? ""
        #expect(ttl.hasSuffix("s") && (590...600).contains(Int(ttl.dropLast()) ?? 0), "android.ttl \(ttl)")

        // Without options: priority 10, no collapse id, the max age; the thread is still the channel's.
        #expect(try desk.run(send).status == 0)
        #expect(try await eventually { apns.fake.received.count == 2 })
        let plain = try #require(apns.fake.received.last)
        #expect(plain.headers["apns-priority"] == "10" && plain.headers["apns-collapse-id"] == nil)
        #expect(plain.json?["aps"]?["thread-id"] == .string(channel))
        #expect(try await eventually { fakes.fcm.received.count == 2 })
        let plainAndroid = try JSONParser.parse(try #require(fakes.fcm.received.last).body)["message"]?["android"]
        #expect(plainAndroid?["priority"] == .string("high") && plainAndroid?["ttl"] == nil)
        #expect(plainAndroid?["collapse_key"] == nil)
    }
}
