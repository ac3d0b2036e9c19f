import Foundation
import GRDB
import HeraldCore
import Testing

/// Ten SIGKILLs in a row, each at a random moment of mixed load (registrations, subscriptions and
/// notifications) while pushes flow to a fake APNs: every acknowledged write is in the database
/// afterwards, the outbox holds exactly the pushes the `202`s counted for their items, and after one
/// last restart every one of them has reached APNs and is recorded sent.
///
/// It kills the release binary when `HERALD_TEST_RELEASE_BINARY` names it, as `make check` does
/// (the build users run, whose timing differs from the debug build's); a bare `swift test` falls back
/// to the debug binary the other tests use, and says so.
@Suite(.serialized) struct CrashSafetyTests {
    static let channelKey = try! PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")

    static var readOnly: Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        return configuration
    }

    /// What the database holds after the kills.
    struct Stored {
        let bindings: Set<String>
        let subscribers: Set<String>
        let sids: Set<String>
        /// The item of every notification push queued, and of those not recorded sent.
        let outbox: [String]
        let unsent: [String]

        init(_ db: Database) throws {
            bindings = Set(
                try Row.fetchAll(db, sql: "SELECT wallet, device_token FROM bindings").map { row -> String in
                    let wallet: Data = row["wallet"]
                    let token: String = row["device_token"]
                    return Hex.encode(wallet) + ":" + token
                })
            subscribers = Set(try Data.fetchAll(db, sql: "SELECT subscriber FROM subscriptions").map { Hex.encode($0) })
            sids = Set(try Int64.fetchAll(db, sql: "SELECT sid FROM feed_items").map(String.init))
            let pushes = try Row.fetchAll(db, sql: "SELECT sid, status FROM push_outbox WHERE sid IS NOT NULL")
                .map { row -> (sid: String, status: String) in (String(row["sid"] as Int64), row["status"]) }
            outbox = pushes.map(\.sid)
            unsent = pushes.filter { $0.status != "sent" }.map(\.sid)
        }
    }

    /// The binary to kill: the release build named by `HERALD_TEST_RELEASE_BINARY`, else the debug one.
    static func serverBinary() throws -> URL {
        guard let path = ProcessInfo.processInfo.environment["HERALD_TEST_RELEASE_BINARY"], !path.isEmpty else {
            print("crash-safety: HERALD_TEST_RELEASE_BINARY is not set; killing the debug binary instead")
            return try CLIRunner.binary()
        }
        let url = URL(fileURLWithPath: path)
        try #require(
            FileManager.default.isExecutableFile(atPath: url.path),
            "HERALD_TEST_RELEASE_BINARY=\(path) is not an executable; run `make release` first")
        print("crash-safety: killing the release binary \(path)")
        return url
    }

    @Test func tenKillsInARowLoseNothingAcknowledged() async throws {
        let binary = try Self.serverBinary()
        let folder = NSTemporaryDirectory() + "herald-crash-\(UUID().uuidString)"
        let database = folder + "/herald.sqlite"
        // Pushes go to a fake APNs while the kills happen, so delivery is interrupted too.
        let apns = try await APNsFixture(folder: folder)
        defer { apns.fake.stop() }
        let serverArguments = ["--setup-confirmation", "false"] + apns.serverArguments
        let ledger = MixedLoad.Ledger()
        var followers: [EthereumAddress] = []
        var killedMidLoad = 0
        for round in 0..<10 {
            let server = try ServerProcess(databasePath: database, extraArguments: serverArguments, binary: binary)
            try await server.start()
            if round == 0 {
                let cli = try CLIRunner()
                defer { cli.cleanUp() }
                #expect(
                    try cli.run([
                        "channel", "add", Self.channelKey.address.checksummed, "--name", "Crash", "--database",
                        database,
                    ]).status == 0)
            }
            // This round's load, signed up front: 60 new wallets register and subscribe; notifications go
            // to wallets that followed in earlier rounds.
            let work = try MixedLoad.round(
                round, wallets: 60, notifications: 40, followers: followers, channel: Self.channelKey, ledger: ledger)
            let killAfter = Int.random(in: 20...max(21, work.count - 10))
            if await MixedLoad.send(work, to: [server.baseURL], ledger: ledger, killing: server, after: killAfter) {
                killedMidLoad += 1
            }
            _ = try await server.waitForExit()
            followers = await ledger.followers
        }
        #expect(killedMidLoad >= 8, "most kills should land mid-load, not after it")

        // One last start: every push queued for an acknowledged item reaches APNs, kills or not.
        let ackedSids = Set(await ledger.sids)
        let last = try ServerProcess(databasePath: database, extraArguments: serverArguments, binary: binary)
        try await last.start()
        // Done when nothing is left queued (a push sent before a kill may be queued still, to go again).
        let watcher = try DatabaseQueue(path: database, configuration: Self.readOnly)
        let drained = try await eventually(60) {
            try await watcher.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM push_outbox WHERE status = 'queued'") == 0
            }
        }
        try watcher.close()
        last.kill(SIGTERM)
        _ = try await last.waitForExit()
        #expect(drained, "the outbox drained after the last start")
        #expect(
            ackedSids.isSubset(of: Set(apns.deliveredSids)),
            "\(ackedSids.subtracting(apns.deliveredSids).count) acknowledged items never pushed")

        let queue = try DatabaseQueue(path: database)
        defer { try? queue.close() }
        let stored = try await queue.read { db in try Stored(db) }
        let acked = await (ledger.bindings, ledger.subscriptions, ledger.sids, ledger.pushes)
        // The queued pushes of acknowledged items, exactly as many as the 202s counted: none lost, none doubled.
        let queuedForAcked = stored.outbox.filter { ackedSids.contains($0) }.count
        let deliveries = apns.deliveredSids.filter { ackedSids.contains($0) }
        print(
            "crash-safety: \(killedMidLoad) kills mid-load; acknowledged \(acked.0.count) bindings, \(acked.1.count) subscriptions, \(acked.2.count) items, \(acked.3) pushes; stored \(stored.bindings.count), \(stored.subscribers.count), \(stored.sids.count), \(stored.outbox.count) (\(queuedForAcked) of acknowledged items); APNs received \(deliveries.count) pushes of them (\(deliveries.count - Set(deliveries).count) sent again after a kill cut off the record of their acceptance)"
        )
        #expect(acked.0.count > 100 && acked.2.count > 20, "enough was acknowledged to mean something")
        #expect(
            acked.0.filter { !stored.bindings.contains(Hex.encode($0.0.bytes) + ":" + $0.1) }.isEmpty, "bindings lost")
        #expect(acked.1.filter { !stored.subscribers.contains(Hex.encode($0.bytes)) }.isEmpty, "subscriptions lost")
        #expect(acked.2.filter { !stored.sids.contains($0) }.isEmpty, "feed items lost")
        #expect(
            stored.unsent.filter { ackedSids.contains($0) }.isEmpty, "pushes of acknowledged items not recorded sent")
        #expect(
            queuedForAcked == acked.3,
            "\(queuedForAcked) pushes in the outbox for acknowledged items, \(acked.3) acknowledged")
    }
}
