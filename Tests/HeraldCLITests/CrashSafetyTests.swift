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

    /// What the clients were told succeeded.
    actor Ledger {
        var bindings: [(EthereumAddress, String)] = []
        var subscriptions: [EthereumAddress] = []
        var sids: [String] = []
        var pushes = 0
        var count: Int { bindings.count + subscriptions.count + sids.count }

        func bound(_ wallet: EthereumAddress, _ token: String) { bindings.append((wallet, token)) }
        func subscribed(_ wallet: EthereumAddress) { subscriptions.append(wallet) }
        func sent(_ answer: JSONValue) {
            if case .array(let items)? = answer["sid"] { sids += items.compactMap(\.stringValue) }
            if case .number(let text)? = answer["pushes"] { pushes += Int(text) ?? 0 }
        }
    }

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
        let ledger = Ledger()
        let domain = HeraldDomain(chainId: 1)
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
            let now = UInt64(Date().timeIntervalSince1970)
            let wallets = (0..<60).map { _ in PrivateKey.generate() }
            var operations: [(path: String, body: String, ack: @Sendable (JSONValue) async -> Void)] = []
            for (index, key) in wallets.enumerated() {
                let token = String(format: "%064x", round * 1000 + index)
                let binding = DeviceBinding(
                    action: .register, wallet: key.address, platform: .ios, deviceToken: token, audience: "herald-test",
                    nonce: UInt256(1), issuedAt: UInt256(now - 5), expiresAt: UInt256(now + 300))
                let subscription = Subscription(
                    action: .subscribe, channel: Self.channelKey.address, subscriber: key.address,
                    audience: "herald-test", nonce: UInt256(2), issuedAt: UInt256(now - 5),
                    expiresAt: UInt256(now + 300))
                let wallet = key.address
                operations.append(
                    (
                        "/v1/devices", try binding.signed(with: key, scheme: .eip712, domain: domain).jsonText,
                        { _ in await ledger.bound(wallet, token) }
                    ))
                operations.append(
                    (
                        "/v1/subscriptions",
                        try subscription.signed(with: key, scheme: .eip712, domain: domain).jsonText,
                        { _ in await ledger.subscribed(wallet) }
                    ))
            }
            for index in 0..<(followers.isEmpty ? 0 : 40) {
                let payload = NotificationDraft(title: "r\(round) n\(index)", body: "b").targetedPayload(
                    to: [followers[index % followers.count], followers[(index * 7 + 3) % followers.count]])
                let notification = NotificationOperation(
                    channel: Self.channelKey.address, payload: payload, audience: "herald-test",
                    nonce: UInt256(UInt64(round * 1000 + index + 10)), issuedAt: UInt256(now - 5),
                    expiresAt: UInt256(now + 300))
                operations.append(
                    (
                        "/v1/notifications",
                        try notification.signed(with: Self.channelKey, scheme: .eip712, domain: domain).jsonText,
                        { answer in await ledger.sent(answer) }
                    ))
            }
            operations.shuffle()
            let before = await ledger.count
            let killAfter = Int.random(in: 20...max(21, operations.count - 10))
            let base = server.baseURL
            let work = operations
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for index in stride(from: worker, to: work.count, by: 8) {
                            guard
                                let (status, body) = try? await HTTP.post(
                                    base + work[index].path, json: work[index].body)
                            else { return }
                            if status == 200 || status == 202, let answer = try? JSONParser.parse(Array(body)) {
                                await work[index].ack(answer)
                            }
                        }
                    }
                }
                group.addTask {
                    while await ledger.count - before < killAfter { try? await Task.sleep(for: .milliseconds(2)) }
                    server.kill(SIGKILL)
                }
            }
            _ = try await server.waitForExit()
            if await ledger.count - before < work.count { killedMidLoad += 1 }
            // Wallets both bound and subscribed (acknowledged) receive the next rounds' notifications.
            let bound = Set(await ledger.bindings.map(\.0))
            followers = await ledger.subscriptions.filter { bound.contains($0) }
        }
        #expect(killedMidLoad >= 8, "most kills should land mid-load, not after it")

        // One last start: every push queued for an acknowledged item reaches APNs, kills or not.
        let ackedSids = Set(await ledger.sids)
        let last = try ServerProcess(databasePath: database, extraArguments: serverArguments, binary: binary)
        try await last.start()
        // Done when nothing is left queued (a push sent before a kill may be queued still, to go again).
        let watcher = try DatabaseQueue(path: database, configuration: Self.readOnly)
        let drained = try await RelayEndToEndTests.eventually(60) {
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
