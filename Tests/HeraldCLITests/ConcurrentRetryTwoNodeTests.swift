import Foundation
import HeraldCore
import Testing

/// docs/protocol.md §11.2's "concurrent identical requests, on one node or several: one applies; the others
/// wait for its commit and answer its answer": the same 1,000-recipient send posted five times at once to
/// two `herald serve` processes on one PostgreSQL gives one set of items and pushes, and five equal answers,
/// four of them marked `Idempotent-Replay: true`.
@Suite(.serialized, .enabled(if: PostgresDatabase.available, "needs HERALD_TEST_POSTGRES_URL (make test starts one)"))
struct ConcurrentRetryTwoNodeTests {
    static let channelKey = try! PrivateKey(hex: "0x" + String(repeating: "c3", count: 32))
    static let recipients = 1_000

    /// The i-th recipient (from 1): `0xee`, zeros, then i; written by SQL below as the same bytes.
    static func recipient(_ index: Int) throws -> EthereumAddress {
        let number = UInt64(index)
        let low = (0..<8).map { UInt8(truncatingIfNeeded: number >> (56 - 8 * UInt64($0))) }
        return try EthereumAddress(bytes: [0xee] + Array(repeating: 0, count: 11) + low)
    }

    @Test func fiveCopiesAtOnceOnTwoNodesApplyOnce() async throws {
        let database = try PostgresDatabase()
        defer { database.drop() }
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let added = try cli.run([
            "channel", "add", Self.channelKey.address.checksummed, "--name", "Retries", "--database", database.url,
        ])
        #expect(added.status == 0, "\(added.stderr)")
        // A thousand subscribers with one iOS binding each, written straight into the tables (seen now: the
        // pruning at start drops bindings not refreshed for 30 days).
        let channel = Hex.encode(Self.channelKey.address.bytes)
        let seen = Int(Date().timeIntervalSince1970)
        _ = try database.query(
            """
            INSERT INTO subscriptions (channel, subscriber, since)
            SELECT decode('\(channel)', 'hex'), decode('ee' || lpad(to_hex(i), 38, '0'), 'hex'), 1
            FROM generate_series(1, \(Self.recipients)) AS i;
            INSERT INTO bindings (wallet, platform, device_token, created_at, last_seen)
            SELECT decode('ee' || lpad(to_hex(i), 38, '0'), 'hex'), 'ios', lpad(to_hex(i), 64, '0'), \(seen), \(seen)
            FROM generate_series(1, \(Self.recipients)) AS i
            """)
        let arguments = ["--setup-confirmation", "false"]
        let a = try ServerProcess(databasePath: database.url, extraArguments: arguments)
        let b = try ServerProcess(databasePath: database.url, extraArguments: arguments)
        try await a.start()
        try await b.start()
        defer { for server in [a, b] { server.kill(SIGKILL) } }

        let now = UInt64(Date().timeIntervalSince1970)
        let send = try NotificationOperation(
            channel: Self.channelKey.address,
            payload: NotificationDraft(title: "Order 88", body: "filled").targetedPayload(
                to: try (1...Self.recipients).map(Self.recipient)),
            audience: "herald-test", nonce: UInt256(7), issuedAt: UInt256(now - 5), expiresAt: UInt256(now + 300)
        ).signed(with: Self.channelKey, scheme: .eip712, domain: HeraldDomain(chainId: 1)).jsonText

        let nodes = [a.baseURL, b.baseURL, a.baseURL, b.baseURL, a.baseURL]
        let answers = try await withThrowingTaskGroup(of: HTTP.Exchange.self) { group in
            for node in nodes { group.addTask { try await HTTP.exchange(node + "/v1/notifications", json: send) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.map(\.status) == Array(repeating: 202, count: 5), "\(answers.map(\.status))")
        #expect(Set(answers.map(\.body)).count == 1, "five equal bodies")
        let replays = answers.filter(\.idempotentReplay).count
        #expect(replays == 4, "\(replays) answers marked Idempotent-Replay")
        let first = try #require(answers.first.flatMap { try? JSONParser.parse(Array($0.body)) })
        #expect(first["recipients"] == .number(String(Self.recipients)))
        guard case .array(let sids)? = first["sid"] else {
            Issue.record("no sid array: \(first.jsonText.prefix(200))")
            return
        }
        #expect(sids.count == Self.recipients)
        #expect(first["pushes"] == .number(String(Self.recipients)))

        let counts = try database.query(
            "SELECT (SELECT count(*) FROM notifications), (SELECT count(*) FROM feed_items), "
                + "(SELECT count(*) FROM push_outbox WHERE sid IS NOT NULL)")
        #expect(counts == ["1|\(Self.recipients)|\(Self.recipients)"], "notifications|items|pushes: \(counts)")
        // Another send with that nonce is a replay.
        let other = try NotificationOperation(
            channel: Self.channelKey.address,
            payload: NotificationDraft(title: "Order 89", body: "filled").targetedPayload(to: [try Self.recipient(1)]),
            audience: "herald-test", nonce: UInt256(7), issuedAt: UInt256(now - 5), expiresAt: UInt256(now + 300)
        ).signed(with: Self.channelKey, scheme: .eip712, domain: HeraldDomain(chainId: 1)).jsonText
        #expect(try await HTTP.exchange(b.baseURL + "/v1/notifications", json: other).status == 409)
        print(
            "five copies at once on two nodes: \(answers.count - replays) applied, \(replays) answered again; "
                + "notifications|items|pushes \(counts.first ?? "?"); answers of \(answers.first?.body.count ?? 0) bytes, equal"
        )
    }
}
