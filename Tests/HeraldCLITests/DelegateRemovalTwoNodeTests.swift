import Foundation
import HeraldCore
import Synchronization
import Testing

/// docs/protocol.md §11.1's "a removal is effective at once on every node": a delegate's bot sends through
/// two `herald serve` processes on one PostgreSQL while the channel removes it through one of them. No
/// send that started after the removal's answer is accepted, whichever node it reached, and the database
/// holds exactly the sends that were.
@Suite(.serialized, .enabled(if: PostgresDatabase.available, "needs HERALD_TEST_POSTGRES_URL (make test starts one)"))
struct DelegateRemovalTwoNodeTests {
    static let channelKey = try! PrivateKey(hex: "0x" + String(repeating: "a7", count: 32))
    static let botKey = try! PrivateKey(hex: "0x" + String(repeating: "b8", count: 32))
    static let domain = HeraldDomain(chainId: 1)

    static func window() -> (UInt256, UInt256) {
        let now = UInt64(Date().timeIntervalSince1970)
        return (UInt256(now - 5), UInt256(now + 300))
    }

    static func delegate(_ action: DelegateUpdate.Action, nonce: UInt64) throws -> String {
        let (issued, expires) = window()
        return try DelegateUpdate(
            action: action, channel: channelKey.address, delegate: botKey.address, audience: "herald-test",
            nonce: UInt256(nonce), issuedAt: issued, expiresAt: expires
        ).signed(with: channelKey, scheme: .eip712, domain: domain).jsonText
    }

    static func botSend(nonce: UInt64) throws -> String {
        let (issued, expires) = window()
        return try NotificationOperation(
            channel: channelKey.address, payload: NotificationDraft(title: "t", body: "b").broadcastPayload(),
            audience: "herald-test", nonce: UInt256(nonce), issuedAt: issued, expiresAt: expires
        ).signed(with: botKey, scheme: .eip712, domain: domain).jsonText
    }

    /// One send's outcome, with when its request started and when its answer came.
    struct Attempt: Sendable {
        let started: ContinuousClock.Instant
        let answered: ContinuousClock.Instant
        let status: Int
    }

    @Test func noSendIsAcceptedAfterTheRemovalsAnswerOnEitherNode() async throws {
        let database = try PostgresDatabase()
        defer { database.drop() }
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let added = try cli.run([
            "channel", "add", Self.channelKey.address.checksummed, "--name", "Bots", "--database", database.url,
                // Broadcasts without the channel's hourly limit: the bot sends many.
        ])
        #expect(added.status == 0, "\(added.stderr)")
        let arguments = ["--setup-confirmation", "false", "--limits-channel-broadcasts-per-hour", "0"]
        let a = try ServerProcess(databasePath: database.url, extraArguments: arguments)
        let b = try ServerProcess(databasePath: database.url, extraArguments: arguments)
        try await a.start()
        try await b.start()
        defer { for server in [a, b] { server.kill(SIGKILL) } }
        let (addStatus, _) = try await HTTP.post(a.baseURL + "/v1/delegates", json: try Self.delegate(.add, nonce: 1))
        #expect(addStatus == 200)

        // Four senders, two a node, each with its own nonces, until well after the removal.
        let stop = StopFlag()
        let nodes = [a.baseURL, b.baseURL]
        let remover = b.baseURL
        let attempts = try await withThrowingTaskGroup(of: [Attempt].self) { group in
            for sender in 0..<4 {
                group.addTask {
                    var mine: [Attempt] = []
                    var nonce = UInt64(1_000 * (sender + 1))
                    while !stop.isSet {
                        nonce += 1
                        let body = try Self.botSend(nonce: nonce)
                        let started = ContinuousClock.now
                        let (status, _) = try await HTTP.post(nodes[sender % 2] + "/v1/notifications", json: body)
                        mine.append(Attempt(started: started, answered: .now, status: status))
                    }
                    return mine
                }
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(700))
                let (status, _) = try await HTTP.post(
                    remover + "/v1/delegates", json: try Self.delegate(.remove, nonce: 2))
                let answered = ContinuousClock.now
                try await Task.sleep(for: .milliseconds(700))
                stop.set()
                return [Attempt(started: answered, answered: answered, status: -status)]
            }
            var all: [Attempt] = []
            for try await batch in group { all += batch }
            return all
        }
        guard let removal = attempts.first(where: { $0.status < 0 }) else {
            Issue.record("the removal did not run")
            return
        }
        #expect(removal.status == -200)
        let sends = attempts.filter { $0.status >= 0 }
        let before = sends.filter { $0.answered < removal.started }
        let after = sends.filter { $0.started > removal.answered }
        #expect(before.contains { $0.status == 202 }, "the bot sent before the removal")
        #expect(!after.isEmpty, "the bot kept sending after the removal")
        let acceptedAfter = after.filter { $0.status == 202 }.count
        #expect(acceptedAfter == 0, "\(acceptedAfter) of \(after.count) sends after the removal's answer accepted")
        #expect(after.allSatisfy { $0.status == 401 })
        let accepted = sends.filter { $0.status == 202 }.count
        let stored = try database.query("SELECT COUNT(*) FROM notifications WHERE signer IS NOT NULL")
        #expect(stored == [String(accepted)], "\(accepted) sends accepted")
        print(
            "delegate removal: \(before.count) sends before the answer, \(after.count) after (\(acceptedAfter) accepted), "
                + "\(sends.count - before.count - after.count) in flight at it; \(accepted) stored")
    }
}

/// Tells the sending tasks to stop.
private final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}
