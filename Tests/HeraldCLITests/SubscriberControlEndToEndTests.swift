import Foundation
import HeraldCore
import Testing

/// docs/protocol.md §10 by hand, as docs/subscriber-control.md walks it, through real processes: a channel
/// publishes settings, a subscriber opts out of one and mutes another channel, a send shows `filtered`,
/// and the phone's badge follows reads made on another device (the CLI's inbox).
@Suite struct SubscriberControlEndToEndTests {
    static func text(_ output: CLIRunner.Output) -> String {
        output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func json(_ output: CLIRunner.Output) throws -> JSONValue { try JSONParser.parse(Array(output.stdout.utf8)) }

    @Test(arguments: TestBackend.available)
    func settingsMutesAndBadgesFollowTheSubscriber(_ backend: TestBackend) async throws {
        let (database, drop) = try backend.make("control")
        defer { drop() }
        let folder = NSTemporaryDirectory() + "herald-control-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let apns = try await APNsFixture(folder: folder)
        defer { apns.fake.stop() }
        let server = try ServerProcess(
            databasePath: database, extraArguments: ["--setup-confirmation", "false"] + apns.serverArguments)
        try await server.start()
        defer { server.kill(SIGKILL) }
        let channels = try CLIRunner(passphrase: "channel pass")
        let subscriber = try CLIRunner(passphrase: "subscriber pass")
        defer {
            channels.cleanUp()
            subscriber.cleanUp()
        }
        #expect(try channels.run(["wallet", "create", "--light", "--name", "desk"]).status == 0)
        #expect(try channels.run(["wallet", "create", "--light", "--name", "news"]).status == 0)
        #expect(try subscriber.run(["wallet", "create", "--light"]).status == 0)
        let desk = Self.text(try channels.run(["wallet", "address", "desk"]))
        let news = Self.text(try channels.run(["wallet", "address", "news"]))
        let wallet = Self.text(try subscriber.run(["wallet", "address"]))
        for (address, name) in [(desk, "Desk"), (news, "News")] {
            #expect(try channels.run(["channel", "add", address, "--name", name, "--database", database]).status == 0)
        }
        let phone = String(repeating: "5e", count: 32)
        #expect(
            try subscriber.run(["register", "--server", server.baseURL, "--platform", "ios", "--device-token", phone])
                .status == 0)
        for address in [desk, news] {
            #expect(try subscriber.run(["subscribe", address, "--server", server.baseURL]).status == 0)
        }

        // Desk publishes two toggles; a list that breaks the rules never leaves the machine (exit 65).
        let settingsFile = folder + "/settings.json"
        try Data(
            #"[ {"kind": "toggle", "id": "trades", "default": true, "description": "Trade updates"}, {"id": "promos", "kind": "toggle", "default": true} ]"#
                .utf8
        ).write(to: URL(fileURLWithPath: settingsFile))
        let published = try channels.run([
            "channel", "settings", "set", "--channel-wallet", "desk", "--server", server.baseURL, "--file",
            settingsFile,
        ])
        #expect(published.status == 0, "\(published.stderr)")
        try Data(#"[{"id":"Bad","kind":"toggle","default":true}]"#.utf8).write(
            to: URL(fileURLWithPath: folder + "/bad.json"))
        #expect(
            try channels.run([
                "channel", "settings", "set", "--channel-wallet", "desk", "--server", server.baseURL, "--file",
                folder + "/bad.json",
            ]).status == 65)
        let shown = try channels.run(["channel", "settings", "show", desk, "--server", server.baseURL, "--json"])
        #expect(
            Self.text(shown)
                == #"[{"id":"trades","kind":"toggle","default":true,"description":"Trade updates"},"#
                + #"{"id":"promos","kind":"toggle","default":true,"description":""}]"#)

        // The subscriber opts out of promos and mutes News for eight hours.
        let chosen = try subscriber.run(["settings", desk, "--server", server.baseURL, "--set", "promos=false"])
        #expect(Self.text(chosen) == "trades true\npromos false", "\(chosen.stderr)")
        #expect(
            Self.text(try subscriber.run(["settings", desk, "--server", server.baseURL])) == "trades true\npromos false"
        )
        let muted = try subscriber.run(["mute", news, "--server", server.baseURL, "--for", "8h", "--json"])
        #expect(muted.status == 0, "\(muted.stderr)")
        #expect(try Self.json(muted)["mutedUntil"] != .number("0"))

        // A promo is filtered; a trade update reaches the phone with badge 1; News is stored, not pushed.
        func send(_ wallet: String, _ extra: [String]) throws -> JSONValue {
            let sent = try channels.run(
                [
                    "send", "--channel-wallet", wallet, "--server", server.baseURL, "--title", "T", "--body", "B",
                    "--json",
                ]
                    + extra)
            #expect(sent.status == 0, "\(sent.stderr)")
            return try Self.json(sent)
        }
        let promo = try send("desk", ["--broadcast", "--setting", "promos"])
        #expect(promo["filtered"] == .number("1") && promo["recipients"] == .number("0"))
        let promoText = try channels.run(
            ["send", "--channel-wallet", "desk", "--server", server.baseURL, "--title", "T", "--body", "B"]
                + ["--broadcast", "--setting", "promos"])
        #expect(Self.text(promoText) == "sent to 0 recipient(s), 0 push(es) queued; sid -; 1 filtered")
        let trade = try send("desk", ["--to", wallet, "--setting", "trades"])
        #expect(trade["recipients"] == .number("1") && trade["pushes"] == .number("1"))
        let headline = try send("news", ["--broadcast"])
        #expect(headline["recipients"] == .number("1") && headline["pushes"] == .number("0"))
        #expect(try await eventually { apns.fake.received.count == 1 })
        #expect(apns.fake.received.first?.json?["aps"]?["badge"] == .number("1"))

        // Another device (this CLI) reads one item: the phone's badge follows, to the unread count.
        #expect(try subscriber.run(["inbox", "sync", "--server", server.baseURL]).status == 0)
        #expect(Self.text(try subscriber.run(["inbox", "count", "--unread"])) == "2")
        let rows = try Self.json(try subscriber.run(["inbox", "list", "--json"]))
        guard case .array(let items) = rows, case .number(let newest)? = items.first?["nid"] else {
            Issue.record("inbox list gave \(rows)")
            return
        }
        let read = try subscriber.run(["inbox", "read", newest, "--server", server.baseURL, "--json"])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(Self.text(read) == #"{"read":1,"unread":1}"#)
        #expect(try await eventually { apns.fake.received.count == 2 })
        let badge = try #require(apns.fake.received.last)
        #expect(badge.json == .object([("aps", .object([("badge", .number("1"))]))]))
        #expect(badge.headers["apns-priority"] == "5" && badge.headers["apns-collapse-id"] == "herald-badge")

        let listing = try Self.json(try subscriber.run(["subscriptions", "--server", server.baseURL, "--json"]))
        guard case .array(let subscriptions) = listing else {
            Issue.record("subscriptions gave \(listing)")
            return
        }
        let byChannel = Dictionary(
            uniqueKeysWithValues: subscriptions.compactMap { row in
                row["channel"]?.stringValue.map { ($0, row) }
            })
        #expect(byChannel[news]?["mutedUntil"] != .number("0") && byChannel[desk]?["mutedUntil"] == .number("0"))
        #expect(byChannel[desk]?["settings"]?.jsonText == #"{"trades":true,"promos":false}"#)
        // The item read was the newest, News's headline: the trade from Desk is still unread.
        #expect(byChannel[desk]?["unread"] == .number("1") && byChannel[news]?["unread"] == .number("0"))

        // Everything read: badge 0 on the phone.
        let all = try subscriber.run(["inbox", "read", "--all", "--server", server.baseURL, "--json"])
        #expect(Self.text(all) == #"{"read":1,"unread":0}"#)
        #expect(try await eventually { apns.fake.received.last?.json?["aps"]?["badge"] == .number("0") })
    }
}
