import Foundation
import HeraldCore
import Testing

/// Two `herald serve` processes on one PostgreSQL database, no proxy in front: clients spread their
/// registrations, subscriptions and notifications over both; an operation acknowledged by one node and
/// replayed to the other is refused; one node is SIGKILLed mid-load and started again. Afterwards every
/// acknowledged write is in the database and every acknowledged item's push has reached the fake APNs.
@Suite(.serialized, .enabled(if: PostgresDatabase.available, "needs HERALD_TEST_POSTGRES_URL (make test starts one)"))
struct TwoNodeTests {
    static let channelKey = try! PrivateKey(hex: "0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f")

    @Test func twoNodesShareOneDatabaseRefuseReplaysAcrossNodesAndSurviveAKill() async throws {
        let database = try PostgresDatabase()
        defer { database.drop() }
        let folder = NSTemporaryDirectory() + "herald-two-nodes-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let apns = try await APNsFixture(folder: folder)
        defer { apns.fake.stop() }
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let added = try cli.run([
            "channel", "add", Self.channelKey.address.checksummed, "--name", "Nodes", "--database", database.url,
        ])
        #expect(added.status == 0, "\(added.stderr)")
        // A short lease, so that the pushes the killed node held are taken over within the test.
        let arguments = ["--setup-confirmation", "false", "--push-lease", "5"] + apns.serverArguments
        func node() async throws -> ServerProcess {
            let server = try ServerProcess(databasePath: database.url, extraArguments: arguments)
            try await server.start()
            return server
        }
        var a = try await node()
        let b = try await node()
        let ledger = MixedLoad.Ledger()

        // Round 0, over both nodes: wallets register and subscribe.
        let first = try MixedLoad.round(
            0, wallets: 40, notifications: 0, followers: [], channel: Self.channelKey, ledger: ledger)
        await MixedLoad.send(first, to: [a.baseURL, b.baseURL])
        let roundZero = await (ledger.bindings.count, ledger.subscriptions.count)
        #expect(roundZero == (40, 40))

        // Every one of them sent again to the other node: the first answer, kept in the database, with
        // Idempotent-Replay, and nothing applied twice (docs/protocol.md §11.2).
        var repeated = 0
        for (index, post) in first.enumerated() {
            let other = index % 2 == 0 ? b.baseURL : a.baseURL
            let again = try await HTTP.exchange(other + post.path, json: post.body)
            let status = (try? JSONParser.parse(Array(again.body)))?["status"]?.stringValue
            if again.status == 200 && again.idempotentReplay && (status == "registered" || status == "subscribed") {
                repeated += 1
            }
        }
        #expect(repeated == first.count, "\(first.count - repeated) copies not answered their first answer")

        // Round 1: notifications and more wallets over both nodes; node A is killed partway through.
        let second = try MixedLoad.round(
            1, wallets: 30, notifications: 60, followers: await ledger.followers, channel: Self.channelKey,
            ledger: ledger)
        let midLoad = await MixedLoad.send(
            second, to: [a.baseURL, b.baseURL], ledger: ledger, killing: a, after: second.count / 3)
        _ = try await a.waitForExit()
        #expect(midLoad, "the kill landed mid-load")

        // Node A comes back; round 2 over both.
        a = try await node()
        let third = try MixedLoad.round(
            2, wallets: 20, notifications: 40, followers: await ledger.followers, channel: Self.channelKey,
            ledger: ledger)
        await MixedLoad.send(third, to: [a.baseURL, b.baseURL])

        // Every queued push goes out: the ones node A held when it died once their lease has passed.
        let drained = try await eventually(60) {
            try database.query("SELECT COUNT(*) FROM push_outbox WHERE status = 'queued'") == ["0"]
        }
        for server in [a, b] { server.kill(SIGTERM) }
        for server in [a, b] { _ = try await server.waitForExit() }
        #expect(drained, "the outbox drained")

        let bindings = Set(try database.query("SELECT encode(wallet, 'hex') || ':' || device_token FROM bindings"))
        let subscribers = Set(try database.query("SELECT encode(subscriber, 'hex') FROM subscriptions"))
        let sids = Set(try database.query("SELECT sid FROM feed_items"))
        let acked = await (ledger.bindings, ledger.subscriptions, Set(ledger.sids), ledger.pushes)
        let delivered = apns.deliveredSids.filter { acked.2.contains($0) }
        let queuedForAcked = try database.query("SELECT sid FROM push_outbox WHERE sid IS NOT NULL")
            .filter { acked.2.contains($0) }.count
        print(
            "two-nodes: acknowledged \(acked.0.count) bindings, \(acked.1.count) subscriptions, \(acked.2.count) items, \(acked.3) pushes; \(repeated) copies answered their first answer by the other node; APNs received \(delivered.count) pushes of acknowledged items, \(delivered.count - Set(delivered).count) of them repeated (in flight when node A was killed)"
        )
        #expect(acked.0.allSatisfy { bindings.contains(Hex.encode($0.0.bytes) + ":" + $0.1) }, "bindings lost")
        #expect(acked.1.allSatisfy { subscribers.contains(Hex.encode($0.bytes)) }, "subscriptions lost")
        #expect(acked.2.isSubset(of: sids), "feed items lost")
        #expect(
            queuedForAcked == acked.3, "\(queuedForAcked) pushes queued for acknowledged items, \(acked.3) acknowledged"
        )
        #expect(acked.2.isSubset(of: Set(delivered)), "\(acked.2.subtracting(delivered).count) items never pushed")
    }
}
