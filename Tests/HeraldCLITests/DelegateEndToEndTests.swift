import Foundation
import HeraldCore
import Testing

/// docs/protocol.md §11.1 by hand, through real processes: a channel adds a bot's wallet as its delegate,
/// the bot sends as the channel and reads its item's status, the channel removes it and the bot's next
/// send is refused.
@Suite struct DelegateEndToEndTests {
    static func text(_ output: CLIRunner.Output) -> String {
        output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: TestBackend.available)
    func aBotSendsAsTheChannelUntilTheChannelRemovesIt(_ backend: TestBackend) async throws {
        let (database, drop) = try backend.make("delegates")
        defer { drop() }
        let server = try ServerProcess(databasePath: database, extraArguments: ["--setup-confirmation", "false"])
        try await server.start()
        defer { server.kill(SIGKILL) }
        let desk = try CLIRunner(passphrase: "desk pass")
        let bot = try CLIRunner(passphrase: "bot pass")
        let subscriber = try CLIRunner(passphrase: "subscriber pass")
        defer {
            for runner in [desk, bot, subscriber] { runner.cleanUp() }
        }
        for runner in [desk, bot, subscriber] {
            #expect(try runner.run(["wallet", "create", "--light"]).status == 0)
        }
        let channel = Self.text(try desk.run(["wallet", "address"]))
        let botAddress = Self.text(try bot.run(["wallet", "address"]))
        #expect(try desk.run(["channel", "add", channel, "--name", "Desk", "--database", database]).status == 0)
        #expect(try subscriber.run(["subscribe", channel, "--server", server.baseURL]).status == 0)
        let send = ["send", "--as-delegate-of", channel, "--server", server.baseURL, "--broadcast", "--title", "T"]

        let early = try bot.run(send + ["--body", "before"])
        #expect(early.status == 3 && early.stderr.contains("signature_mismatch"), "\(early.stderr)")
        let added = try desk.run(["channel", "delegate", "add", botAddress, "--server", server.baseURL])
        #expect(Self.text(added) == "added \(botAddress) for \(channel)", "\(added.stderr)")
        #expect(
            Self.text(try desk.run(["channel", "delegate", "list", channel, "--server", server.baseURL])) == botAddress)

        let sent = try bot.run(send + ["--body", "from the bot", "--json"])
        #expect(sent.status == 0, "\(sent.stderr)")
        let answer = try JSONParser.parse(Array(sent.stdout.utf8))
        #expect(answer["idempotentReplay"] == .bool(false), "a first answer: \(sent.stdout)")
        guard case .array(let sids)? = answer["sid"], let sid = sids.first?.stringValue else {
            Issue.record("no sid in \(sent.stdout)")
            return
        }
        let status = try bot.run(["send", "status", sid, "--as-delegate-of", channel, "--server", server.baseURL])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(Self.text(status).hasPrefix("sid \(sid) to "))
        #expect(Self.text(status).contains("signed by \(botAddress)"))
        let feed = try subscriber.run(["inbox", "sync", "--server", server.baseURL])
        #expect(feed.status == 0, "\(feed.stderr)")

        let removed = try desk.run(["channel", "delegate", "remove", botAddress, "--server", server.baseURL])
        #expect(Self.text(removed) == "removed \(botAddress) for \(channel)")
        let late = try bot.run(send + ["--body", "after"])
        #expect(late.status == 3 && late.stderr.contains("signature_mismatch"), "\(late.stderr)")
        let again = try desk.run(["channel", "delegate", "remove", botAddress, "--server", server.baseURL])
        #expect(Self.text(again) == "absent \(botAddress) for \(channel)")
    }
}
