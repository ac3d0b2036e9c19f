import Foundation
import HeraldCore
import HeraldTesting
import Testing

/// docs/protocol.md §3 during a database outage: two nodes under mixed load (registrations,
/// subscriptions, notifications, feed reads) while their PostgreSQL is stopped for 20 s and started
/// again on the same data folder. While it is down every request is answered within the connect
/// timeout + 1 s with `503 unavailable` and `Retry-After`, and `/healthz` answers 503; after the
/// restart both nodes serve again by themselves; every acknowledged write is stored, every acknowledged
/// item's push reaches the fake APNs, and no process exited. The cluster is this test's own: stopping
/// the run's shared server would fail every other PostgreSQL test running beside it.
@Suite(.serialized, .enabled(if: PostgresDatabase.available, "needs PostgreSQL (make test installs and starts one)"))
struct PostgresOutageTests {
    static let channelKey = try! PrivateKey(hex: "0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f")
    static let connectTimeout = 2.0
    static let outage = 20.0

    @Test func twoNodesAnswer503DuringAnOutageAndServeAgainAfterItLosingNothing() async throws {
        let folder = NSTemporaryDirectory() + "herald-outage-\(UUID().uuidString)"
        let cluster = try PostgresCluster(folder: folder + "/postgres")
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let apns = try await APNsFixture(folder: folder)
        defer { apns.fake.stop() }
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let added = try cli.run([
            "channel", "add", Self.channelKey.address.checksummed, "--name", "Outage", "--database", cluster.url,
        ])
        #expect(added.status == 0, "\(added.stderr)")
        let arguments =
            [
                "--setup-confirmation", "false", "--push-lease", "5", "--database-connect-timeout",
                String(Int(Self.connectTimeout)),
            ] + apns.serverArguments
        let nodes = try await [0, 1].asyncMap { _ in
            let server = try ServerProcess(databasePath: cluster.url, extraArguments: arguments)
            try await server.start()
            return server
        }
        let bases = nodes.map(\.baseURL)
        let ledger = MixedLoad.Ledger()
        let log = OutageLog()

        // Before: wallets register and subscribe.
        await MixedLoad.send(
            try MixedLoad.round(
                0, wallets: 30, notifications: 0, followers: [], channel: Self.channelKey, ledger: ledger),
            to: bases)
        let readers = try FeedReaders(Self.channelKey)

        // During: load runs from before the stop to after the restart; the outage lasts 20 s.
        let load = Task {
            var round = 1
            while !Task.isCancelled {
                let posts = try MixedLoad.round(
                    round, wallets: 6, notifications: 12, followers: await ledger.followers, channel: Self.channelKey,
                    ledger: ledger)
                await Self.send(posts, readers: readers, to: bases, log: log)
                round += 1
            }
        }
        try await Task.sleep(for: .seconds(2))
        try cluster.pause()
        let down = Date()
        log.mark(.down)
        var healthDuring: [Int] = []
        while Date().timeIntervalSince(down) < Self.outage {
            for base in bases { healthDuring.append(try await HTTP.get(base + "/healthz").0) }
            try await Task.sleep(for: .seconds(1))
        }
        log.mark(.restarting)
        try cluster.resume()
        let up = Date()
        let healthy = try await eventually(60) {
            var all = true
            for base in bases where try await HTTP.get(base + "/healthz").0 != 200 { all = false }
            return all
        }
        let recovery = Date().timeIntervalSince(up)
        log.mark(.up)
        try await Task.sleep(for: .seconds(3))
        load.cancel()
        _ = await load.result

        // After: one more round, then the outbox drains.
        await MixedLoad.send(
            try MixedLoad.round(
                900, wallets: 10, notifications: 20, followers: await ledger.followers, channel: Self.channelKey,
                ledger: ledger),
            to: bases)
        let drained = try await eventually(60) {
            try cluster.query("SELECT COUNT(*) FROM push_outbox WHERE status = 'queued'") == ["0"]
        }
        let running = nodes.map { $0.process.isRunning }
        for node in nodes { node.kill(SIGTERM) }
        var stopped = 0
        for node in nodes {
            do {
                _ = try await node.waitForExit()
                stopped += 1
            } catch {
                print("outage: a node did not stop on SIGTERM; its log ends with:\n\(node.log.suffix(3000))")
            }
        }

        let during = log.answers(in: .down)
        let slowest = during.map(\.seconds).max() ?? 0
        let refusedRight = during.filter { $0.status == 503 && $0.code == "unavailable" && $0.retryAfter != nil }
        let bindings = Set(try cluster.query("SELECT encode(wallet, 'hex') || ':' || device_token FROM bindings"))
        let subscribers = Set(try cluster.query("SELECT encode(subscriber, 'hex') FROM subscriptions"))
        let sids = Set(try cluster.query("SELECT sid FROM feed_items"))
        let acked = await (ledger.bindings, ledger.subscriptions, Set(ledger.sids), ledger.acknowledged)
        let delivered = Set(apns.deliveredSids)
        print(
            """
            outage: \(log.count(in: .before)) requests before, \(during.count) during the \(Int(Self.outage)) s \
            outage (\(refusedRight.count) answered 503 unavailable with Retry-After, slowest \
            \(String(format: "%.2f", slowest)) s), \(log.count(in: .restarting)) while restarting, \
            \(log.count(in: .up)) after; /healthz during: \(healthDuring.filter { $0 == 503 }.count) of \
            \(healthDuring.count) answered 503; both nodes healthy \(String(format: "%.1f", recovery)) s after \
            the restart; acknowledged \(acked.3) writes (\(acked.0.count) bindings, \(acked.1.count) \
            subscriptions, \(acked.2.count) items), \(acked.2.intersection(delivered).count) items pushed to APNs
            """)
        #expect(!during.isEmpty, "load ran during the outage")
        #expect(refusedRight.count == during.count, "\(Set(during.map { "\($0.status) \($0.code ?? "-")" }))")
        #expect(slowest <= Self.connectTimeout + 1, "every request answered within the connect timeout + 1 s")
        #expect(healthDuring.allSatisfy { $0 == 503 }, "\(healthDuring)")
        #expect(healthy, "both nodes answer /healthz 200 within 60 s of the restart")
        #expect(running == [true, true], "no node exited")
        #expect(stopped == 2, "both nodes stopped on SIGTERM")
        #expect(drained, "the outbox drained")
        #expect(acked.0.allSatisfy { bindings.contains(Hex.encode($0.0.bytes) + ":" + $0.1) }, "bindings lost")
        #expect(acked.1.allSatisfy { subscribers.contains(Hex.encode($0.bytes)) }, "subscriptions lost")
        #expect(acked.2.isSubset(of: sids), "feed items lost")
        #expect(acked.2.isSubset(of: delivered), "\(acked.2.subtracting(delivered).count) items never pushed")
    }

    /// Sends `posts` with 8 workers over the nodes, acknowledging 200/202s, with a feed read between
    /// posts; every answer goes into `log` with its phase, time, code and `Retry-After`.
    static func send(_ posts: [MixedLoad.Post], readers: FeedReaders, to bases: [String], log: OutageLog) async {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: posts.count, by: 8) where !Task.isCancelled {
                        let base = bases[index % bases.count]
                        let post = posts[index]
                        if let answer = await log.timed({ try await HTTP.exchange(base + post.path, json: post.body) }),
                            answer.status == 200 || answer.status == 202,
                            let json = try? JSONParser.parse(Array(answer.body))
                        {
                            await post.ack(json)
                        }
                        let (path, header) = readers.read(index)
                        _ = await log.timed { try await HTTP.exchange(base + path, authorization: header) }
                        // Paced: the load is there to meet the outage, not to starve the suites beside it.
                        try? await Task.sleep(for: .milliseconds(50))
                    }
                }
            }
        }
    }
}

/// FeedAccess reads, signed once (no crypto while the load runs): the channel reading its own feed
/// and subscriptions, which costs the server a signature recovery and a database read each.
struct FeedReaders: Sendable {
    let requests: [(path: String, header: String)]

    init(_ key: PrivateKey) throws {
        let now = UInt64(Date().timeIntervalSince1970)
        let header = try FeedAccess(
            wallet: key.address, audience: "herald-test", issuedAt: UInt256(now - 5), expiresAt: UInt256(now + 590)
        ).signed(with: key, scheme: .eip712, domain: HeraldDomain(chainId: 1)).authorizationHeader
        let wallet = key.address.checksummed
        requests = [("/v1/users/\(wallet)/feeds", header), ("/v1/users/\(wallet)/subscriptions", header)]
    }

    func read(_ index: Int) -> (String, String) { requests[index % requests.count] }
}

/// Every answer of the load, in the phase it was sent in.
final class OutageLog: @unchecked Sendable {
    enum Phase: Int, Sendable { case before, down, restarting, up }
    struct Answer: Sendable {
        let phase: Phase
        let status: Int
        let code: String?
        let retryAfter: String?
        let seconds: Double
    }

    private let lock = NSLock()
    private var phase = Phase.before
    private var answers: [Answer] = []

    func mark(_ next: Phase) { lock.withLock { phase = next } }

    /// Runs one request, records its answer under the phase it was sent in (only if it ended in the
    /// same phase, so that a request straddling a change counts in neither), and returns it.
    func timed(_ request: () async throws -> HTTP.Exchange) async -> HTTP.Exchange? {
        let sentIn = lock.withLock { phase }
        let started = Date()
        guard let answer = try? await request() else { return nil }
        let seconds = Date().timeIntervalSince(started)
        let code = (try? JSONParser.parse(Array(answer.body)))?["error"]?["code"]?.stringValue
        lock.withLock {
            guard phase == sentIn else { return }
            answers.append(
                Answer(
                    phase: sentIn, status: answer.status, code: code, retryAfter: answer.retryAfter, seconds: seconds))
        }
        return answer
    }

    func answers(in phase: Phase) -> [Answer] { lock.withLock { answers.filter { $0.phase == phase } } }
    func count(in phase: Phase) -> Int { answers(in: phase).count }
}

/// A PostgreSQL cluster of the test's own (scripts/postgres/cluster.sh), which it can stop and start.
struct PostgresCluster {
    let folder: String
    let url: String

    init(folder: String) throws {
        self.folder = folder
        url = try Self.script("start", folder).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func pause() throws { _ = try Self.script("pause", folder) }
    func resume() throws { _ = try Self.script("resume", folder) }
    func stop() { _ = try? Self.script("stop", folder) }

    func query(_ sql: String) throws -> [String] {
        try PostgresDatabase.psql(url, sql).split(separator: "\n").map(String.init)
    }

    private static func script(_ command: String, _ folder: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let process = SpawnedProcess()
        process.executableURL = root.appendingPathComponent("scripts/postgres/cluster.sh")
        process.arguments = [command, folder]
        var environment = ProcessInfo.processInfo.environment
        environment["CLUSTER_SAY_DONE"] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = PipeDrain(output).waitForEnd()
        // The end of its output and its last line say it finished; waiting then only reaps it, so that no
        // zombie is left behind.
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard text.contains("cluster.sh: done") else {
            throw PostgresDatabase.PsqlFailure(message: "cluster.sh \(command) did not finish")
        }
        return text.replacingOccurrences(of: "cluster.sh: done\n", with: "")
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
