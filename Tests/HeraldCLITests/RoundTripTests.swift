import Foundation
import GRDB
import HeraldCore
import Testing

/// The whole path of a secret message through real processes: a channel and a subscriber, each with
/// its own home and keystore, a real `herald serve`, and only the CLI between them.
@Suite struct RoundTripTests {
    static func text(_ output: CLIRunner.Output) -> String {
        output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: TestBackend.available)
    func aSecretMessageFromChannelToSubscriberInbox(_ backend: TestBackend) async throws {
        let (database, drop) = try backend.make("trip")
        defer { drop() }
        let server = try ServerProcess(databasePath: database)
        try await server.start()
        defer { server.kill(SIGKILL) }
        let channel = try CLIRunner(passphrase: "channel pass")
        let subscriber = try CLIRunner(passphrase: "subscriber pass")
        defer {
            channel.cleanUp()
            subscriber.cleanUp()
        }
        #expect(try channel.run(["wallet", "create", "--light", "--name", "desk"]).status == 0)
        #expect(try subscriber.run(["wallet", "create", "--light"]).status == 0)
        let channelAddress = Self.text(try channel.run(["wallet", "address", "desk"]))
        let subscriberAddress = Self.text(try subscriber.run(["wallet", "address"]))

        // The operator adds the channel; the subscriber registers a device and follows an invitation.
        let added = try channel.run([
            "channel", "add", channelAddress, "--name", "Desk", "--icon", "https://d.example/i.png", "--database",
            database,
        ])
        #expect(added.status == 0, "\(added.stderr)")
        let registered = try subscriber.run([
            "register", "--server", server.baseURL, "--platform", "ios", "--device-token",
            String(repeating: "5e", count: 32),
        ])
        #expect(registered.status == 0, "\(registered.stderr)")
        let invitation = Self.text(
            try channel.run(["channel", "invite", channelAddress, "--server", server.baseURL, "--database", database]))
        let subscribed = try subscriber.run(["subscribe", invitation])
        #expect(subscribed.status == 0, "\(subscribed.stderr)")

        // The channel sends a type 2: the plaintext leaves its process only encrypted.
        let secretText = "Dispute 88 opened: reply within 24 h"
        let sent = try channel.run([
            "send", "--channel-wallet", "desk", "--server", server.baseURL, "--to", subscriberAddress, "--title",
            "Dispute", "--body", "A dispute was opened", "--message", secretText, "--cta", "https://d.example/88",
            "--secret", "--json",
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        let receipt = try JSONParser.parse(Array(sent.stdout.utf8))
        #expect(receipt["recipients"] == .number("1"))
        #expect(receipt["pushes"] == .number("1"))

        // The subscriber syncs: one new item, then nothing more.
        let synced = try subscriber.run(["inbox", "sync", "--server", server.baseURL])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout.contains(": 1 new item(s)"), "\(synced.stdout)")
        #expect(try subscriber.run(["inbox", "sync", "--server", server.baseURL]).stdout.contains(": 0 new item(s)"))

        // Listed locked, shown decrypted.
        let listed = try subscriber.run(["inbox", "list", "--json"])
        let rows = try JSONParser.parse(Array(listed.stdout.utf8))
        guard case .array(let items) = rows, let row = items.first, case .number(let nid)? = row["nid"] else {
            Issue.record("inbox list gave \(listed.stdout) \(listed.stderr)")
            return
        }
        #expect(items.count == 1)
        #expect(row["type"] == .number("2"))
        #expect(row["app"] == .string("Desk"))
        #expect(row["amsg"] != .string(secretText))
        let shown = try subscriber.run(["inbox", "show", nid, "--json"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let item = try JSONParser.parse(Array(shown.stdout.utf8))
        #expect(item["decrypted"] == .bool(true))
        #expect(item["amsg"] == .string(secretText))
        #expect(item["asub"] == .string("Dispute"))
        #expect(item["acta"] == .string("https://d.example/88"))
        #expect(item["wallet"] == .string(subscriberAddress))

        // Plaintext never reached the disk: not in the cache, its WAL, or the server's database.
        let serverFiles =
            backend == .sqlite ? try Self.files(under: URL(fileURLWithPath: database).deletingLastPathComponent()) : []
        for file in try Self.files(under: subscriber.home) + serverFiles {
            let bytes = try Data(contentsOf: file)
            #expect(bytes.range(of: Data(secretText.utf8)) == nil, "plaintext found in \(file.path)")
        }
        if backend == .postgres {
            let stored = try PostgresDatabase.psql(
                database,
                """
                SELECT count(*) FROM notifications n JOIN feed_items f ON f.notification = n.id
                WHERE position('Dispute 88' in n.title || n.body || n.asub || n.amsg || n.acta || f.secret) > 0
                """)
            #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "plaintext in PostgreSQL")
        }
    }

    @Test func sendRefusesRecipientsWithoutKeysAndBadUsage() async throws {
        let database = NSTemporaryDirectory() + "herald-send-\(UUID().uuidString)/herald.sqlite"
        let server = try ServerProcess(databasePath: database)
        try await server.start()
        defer { server.kill(SIGKILL) }
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run(["wallet", "create", "--light"]).status == 0)
        let address = Self.text(try cli.run(["wallet", "address"]))
        let stranger = "0x3f243FdacE01Cfd9719f7359c94BA11361f32471"
        let base = ["send", "--server", server.baseURL, "--title", "t", "--body", "b"]

        let noKey = try cli.run(base + ["--to", stranger, "--secret"])
        #expect(noKey.status == 3)
        #expect(noKey.stderr.contains(stranger) && noKey.stderr.contains("no known public key"))
        // A server that publishes someone else's key for a recipient (here planted in its database) is
        // not believed: encrypting to that key would hand the message to its owner. Exit 1.
        let impostor = PrivateKey.generate()
        let queue = try DatabaseQueue(path: database)
        try await queue.write { db in
            try db.execute(
                sql: "INSERT INTO wallet_keys (wallet, public_key, updated_at) VALUES (?, ?, 0)",
                arguments: [
                    Data(try EthereumAddress(parsing: stranger).bytes), Data(impostor.publicKey.uncompressed),
                ])
        }
        try queue.close()
        let lying = try cli.run(base + ["--to", stranger, "--secret"])
        #expect(lying.status == 1)
        #expect(lying.stderr.contains("refusing to encrypt"), "\(lying.stderr)")
        // Not a channel yet: the server refuses (exit 3, its code).
        let notChannel = try cli.run(base + ["--to", stranger])
        #expect(notChannel.status == 3)
        #expect(notChannel.stderr.contains("forbidden"))
        #expect(try cli.run(["channel", "add", address, "--name", "Me", "--database", database]).status == 0)
        let broadcast = try cli.run(base + ["--broadcast"])
        #expect(broadcast.status == 0, "\(broadcast.stderr)")
        #expect(broadcast.stdout.hasPrefix("sent to 0 recipient(s)"))
        let spam = try cli.run(base + ["--to", stranger, address])
        #expect(spam.status == 0, "\(spam.stderr)")
        #expect(spam.stdout.hasPrefix("sent to 2 recipient(s), 0 push(es)"))

        #expect(try cli.run(base).status == 64, "neither --to nor --broadcast")
        #expect(try cli.run(base + ["--broadcast", "--secret"]).status == 64)
        #expect(try cli.run(base + ["--to", "0xnope"]).status == 64)
        let tooLong = try cli.run([
            "send", "--server", server.baseURL, "--title", String(repeating: "x", count: 81), "--body", "b",
            "--broadcast",
        ])
        #expect(tooLong.status == 65)
        #expect(tooLong.stderr.contains("field_too_long"))
    }

    static func files(under folder: URL) throws -> [URL] {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        else { return [] }
        return walker.compactMap { $0 as? URL }.filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }
    }
}
