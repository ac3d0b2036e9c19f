import Foundation
import HeraldCore
import Testing

/// `herald inbox sync` against a real server: paging, the stop at the first cached sid, and items that
/// fail their checks reported and left out while the rest go in.
@Suite struct InboxSyncTests {
    static let channelKey = try! PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")

    /// A server with the test channel known, and a subscriber home whose wallet follows it.
    struct Setup {
        let server: ServerProcess
        let subscriber: CLIRunner
        let address: EthereumAddress

        func send(_ payload: String) async throws {
            let operation = NotificationOperation(
                channel: InboxSyncTests.channelKey.address, payload: payload, audience: "herald-test",
                nonce: try UInt256(bigEndian: SecureRandom.bytes(16)),
                issuedAt: UInt256(UInt64(Date().timeIntervalSince1970) - 5),
                expiresAt: UInt256(UInt64(Date().timeIntervalSince1970) + 120))
            let body = try operation.signed(
                with: InboxSyncTests.channelKey, scheme: .eip712, domain: HeraldDomain(chainId: 1))
            let (status, answer) = try await HTTP.post(server.baseURL + "/v1/notifications", json: body.jsonText)
            #expect(status == 202, "\(String(decoding: answer, as: UTF8.self))")
        }

        func sync(_ extra: [String] = []) throws -> CLIRunner.Output {
            try subscriber.run(["inbox", "sync", "--server", server.baseURL] + extra)
        }
    }

    static func setUp() async throws -> Setup {
        let database = NSTemporaryDirectory() + "herald-sync-\(UUID().uuidString)/herald.sqlite"
        let server = try ServerProcess(databasePath: database)
        try await server.start()
        let subscriber = try CLIRunner()
        #expect(try subscriber.run(["wallet", "create", "--light"]).status == 0)
        let text = try subscriber.run(["wallet", "address"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            try subscriber.run([
                "channel", "add", channelKey.address.checksummed, "--name", "Bot", "--database", database,
            ]).status == 0)
        #expect(
            try subscriber.run(["subscribe", channelKey.address.checksummed, "--server", server.baseURL]).status == 0)
        return Setup(server: server, subscriber: subscriber, address: try EthereumAddress(parsing: text))
    }

    @Test func pagesUntilTheFirstCachedItem() async throws {
        let setup = try await Self.setUp()
        defer {
            setup.server.kill(SIGKILL)
            setup.subscriber.cleanUp()
        }
        for index in 0..<23 {
            try await setup.send(NotificationDraft(title: "m\(index)", body: "b").targetedPayload(to: [setup.address]))
        }
        let first = try setup.sync(["--page-size", "5"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains(": 23 new item(s)"), "\(first.stdout)")
        for index in 23..<26 {
            try await setup.send(NotificationDraft(title: "m\(index)", body: "b").targetedPayload(to: [setup.address]))
        }
        let second = try setup.sync(["--page-size", "5", "--json"])
        #expect(second.stdout.contains(#""added":3"#), "\(second.stdout) \(second.stderr)")
        #expect(second.stdout.contains(#""fetched":4"#), "stops at the first cached sid: \(second.stdout)")
        #expect(try setup.subscriber.run(["inbox", "count"]).stdout == "26\n")
        // Newest first, as sent.
        let listed = try setup.subscriber.run(["inbox", "list", "--limit", "2"])
        #expect(listed.stdout.split(separator: "\n").map { $0.contains("m25") } == [true, false])
        // Synced items know their channel (an extra column after the §6 ones).
        let byChannel = try setup.subscriber.run([
            "inbox", "list", "--all", "--channel", Self.channelKey.address.checksummed,
        ])
        #expect(byChannel.stdout.split(separator: "\n").count == 26)
        let other = try setup.subscriber.run([
            "inbox", "list", "--channel", "0x3f243FdacE01Cfd9719f7359c94BA11361f32471",
        ])
        #expect(other.stdout == "no items\n")
        #expect(
            try setup.subscriber.run(["inbox", "list", "--channel", "Bot", "--limit", "1", "--json"]).stdout.contains(
                #""channel":"\#(Self.channelKey.address.checksummed)""#))
    }

    @Test func anItemThatFailsItsChecksIsReportedAndTheRestGoIn() async throws {
        let setup = try await Self.setUp()
        defer {
            setup.server.kill(SIGKILL)
            setup.subscriber.cleanUp()
        }
        // A type 2 whose secret was sealed to somebody else's key: valid on the wire, unreadable here.
        let stranger = PrivateKey.generate()
        let sealed = try ECIES.encrypt(text: "abcdefghijklmno", to: stranger.publicKey)
        let field = try CryptoJSAES.encrypt("hidden", passphrase: "abcdefghijklmno")
        let payload = JSONValue.object([
            ("notification", .object([("title", .string("t")), ("body", .string("b"))])),
            ("data", .object([("type", .string("2")), ("amsg", .string(field))])),
            ("recipients", .object([(setup.address.checksummed, .object([("secret", .string(sealed))]))])),
        ]).jsonText
        try await setup.send(payload)
        try await setup.send(NotificationDraft(title: "fine", body: "b").targetedPayload(to: [setup.address]))

        let synced = try setup.sync()
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout.contains(": 1 new item(s), 1 skipped"), "\(synced.stdout)")
        #expect(synced.stderr.contains("skipped sid 1: does not decrypt with this wallet's key"), "\(synced.stderr)")
        #expect(try setup.subscriber.run(["inbox", "count"]).stdout == "1\n")
        #expect(try setup.subscriber.run(["inbox", "list"]).stdout.contains("fine"))
    }

    @Test func anItemCachedFromAPushDoesNotHideOlderOnes() async throws {
        let setup = try await Self.setUp()
        defer {
            setup.server.kill(SIGKILL)
            setup.subscriber.cleanUp()
        }
        for index in 1...3 {
            try await setup.send(NotificationDraft(title: "m\(index)", body: "b").targetedPayload(to: [setup.address]))
        }
        // The phone got the push of the newest item (sid 3) only.
        let push =
            #"{"aps":{"alert":{"title":"m3","body":"b"}},"type":"3","sid":"3","epoch":"1","app":"Bot","amsg":"b"}"#
        #expect(try setup.subscriber.run(["inbox", "ingest"], stdin: push).status == 0)
        let synced = try setup.sync(["--json"])
        #expect(synced.stdout.contains(#""added":2"#), "\(synced.stdout) \(synced.stderr)")
        #expect(try setup.subscriber.run(["inbox", "count"]).stdout == "3\n")
        // The synced copy gave the pushed row its channel: the next sync stops at it.
        #expect(try setup.sync(["--json"]).stdout.contains(#""fetched":1"#))
    }
}

/// Many concurrent private reads against a real server: every one is answered. (Synchronous reads
/// from the pool on the executor's threads once hung the server under this load.)
@Suite struct ConcurrentReadTests {
    @Test func concurrentFeedAndKeyReadsAllAnswer() async throws {
        let setup = try await InboxSyncTests.setUp()
        defer {
            setup.server.kill(SIGKILL)
            setup.subscriber.cleanUp()
        }
        try await setup.send(NotificationDraft(title: "x", body: "y").targetedPayload(to: [setup.address]))
        let readers = (0..<32).map { _ in PrivateKey.generate() }
        let now = UInt64(Date().timeIntervalSince1970)
        let headers = try readers.map { key in
            try FeedAccess(
                wallet: key.address, audience: "herald-test", issuedAt: UInt256(now - 5), expiresAt: UInt256(now + 120)
            ).signed(with: key, scheme: .eip712, domain: HeraldDomain(chainId: 1)).authorizationHeader
        }
        let base = setup.server.baseURL
        let subscriber = setup.address.checksummed
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for round in 0..<400 {
                let index = round % readers.count
                let wallet = readers[index].address.checksummed
                let header = headers[index]
                group.addTask {
                    if round % 2 == 0 {
                        return try await HTTP.get("\(base)/v1/users/\(wallet)/feeds", authorization: header).0
                    }
                    return try await HTTP.get("\(base)/v1/users/\(subscriber)/pubkey").0
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 400)
        #expect(statuses.allSatisfy { $0 == 200 }, "\(Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count))")
    }
}
