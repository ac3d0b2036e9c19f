import Foundation
import GRDB
import HeraldCore
import HeraldTesting
import Testing

/// docs/protocol.md §4.3, numbers a remote hands back: whoever registers a Web Push endpoint chooses the
/// host that answers Herald's pushes, and an upstream relay is a peer too. A `Retry-After` or
/// `retryAfter` that no integer type holds, or that waits past the push's deadline, fails the push
/// with a reason; one that is not a non-negative integer is ignored. The server stays up, then and
/// after a restart on the same database (a trap there once recurred at every start, the outcome never
/// having been recorded).
@Suite(.serialized) struct HostilePushServiceTests {
    /// Past every deadline, as digits that fit `Int64` and digits that fit nothing.
    static let hugeWaits = ["9223372036854775807", "99999999999999999999"]

    @Test(arguments: hugeWaits)
    func aWebPushRetryAfterPastTheDeadlineFailsThePushAndTheServerStaysUp(_ wait: String) async throws {
        let setup = try await WebPushEndToEndTests.Setup()
        defer { setup.finish() }
        let path = "/hostile"
        // The setup confirmation, the notification, and the one after the restart: each 429 and the wait.
        for _ in 0..<3 { setup.fake.answer(path, with: .status(429, retryAfter: wait)) }
        _ = try setup.subscribe(path)
        #expect(try await eventually { setup.fake.received(target: path).count == 1 })

        let address = try setup.address
        let sids = try await setup.send(NotificationDraft(title: "t", body: "b").targetedPayload(to: [address]))
        #expect(try await eventually { try await setup.pushes(sids[0]).first?["status"]?.stringValue == "failed" })
        let push = try #require(try await setup.pushes(sids[0]).first)
        #expect(push["attempts"] == .number("1"), "failed at once, not retried")
        #expect(push["lastError"]?.stringValue?.contains("past the push's deadline") == true, "\(push.jsonText)")
        #expect(setup.fake.received(target: path).count == 2)
        try await expectServing(setup.server)

        // A restart on the same database stays up, and the next such answer fails its push too.
        setup.server.kill(SIGKILL)
        _ = try await setup.server.waitForExit()
        setup.server = try ServerProcess(
            databasePath: setup.database, extraArguments: WebPushEndToEndTests.Setup.arguments(setup.folder, true))
        try await setup.server.start()
        let again = try await setup.send(NotificationDraft(title: "t", body: "b").targetedPayload(to: [address]))
        #expect(try await eventually { try await setup.pushes(again[0]).first?["status"]?.stringValue == "failed" })
        try await expectServing(setup.server)
    }

    @Test func aNegativeRetryAfterIsIgnoredAndTheBackoffApplies() async throws {
        let setup = try await WebPushEndToEndTests.Setup()
        defer { setup.finish() }
        let path = "/negative"
        _ = try setup.subscribe(path)
        #expect(try await eventually { setup.fake.received(target: path).count == 1 })
        setup.fake.answer(
            path, with: .status(429, retryAfter: "-5"), .status(503, retryAfter: "Fri, 31 Dec 1999 23:59:59 GMT"))

        let address = try setup.address
        let sids = try await setup.send(NotificationDraft(title: "t", body: "b").targetedPayload(to: [address]))
        // Ignored, the waits are the backoff's (about 1 s, then 2 s): the third attempt is accepted.
        #expect(try await eventually(30) { try await setup.pushes(sids[0]).first?["status"]?.stringValue == "sent" })
        #expect(try await setup.pushes(sids[0]).first?["attempts"] == .number("3"))
        try await expectServing(setup.server)
    }

    @Test(arguments: hugeWaits)
    func anUpstreamRetryAfterAndTokenLifetimePastAnyDeadlineFailThePush(_ number: String) async throws {
        let folder = NSTemporaryDirectory() + "herald-hostile-upstream-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let upstream = FakeUpstream(expiresIn: number, retryAfter: number)
        try await upstream.start()
        let cli = try CLIRunner()
        let database = folder + "/herald.sqlite"
        let keyFile = folder + "/installation.key"
        try Data("key\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        let arguments = [
            "--upstream", upstream.baseURL, "--upstream-installation-id", UUID().uuidString,
            "--upstream-installation-key-file", keyFile,
        ]
        var server = try ServerProcess(databasePath: database, extraArguments: arguments)
        defer {
            server.kill(SIGKILL)
            upstream.stop()
            cli.cleanUp()
            try? FileManager.default.removeItem(atPath: folder)
        }
        try await server.start()
        #expect(try cli.run(["wallet", "create", "--light"]).status == 0)
        let device = ["--platform", "ios", "--device-token", String(repeating: "d4", count: 32)]
        #expect(try cli.run(["register", "--server", server.baseURL] + device).status == 0)

        // The setup confirmation went to the upstream, which asked for a wait past every deadline.
        #expect(try await eventually { try Self.outboxStatuses(database) == ["failed"] })
        let reason = try Self.lastErrors(database).first ?? ""
        #expect(reason.contains("past the push's deadline"), "\(reason)")
        #expect(upstream.tally.pushes == 1)
        try await expectServing(server)

        server.kill(SIGKILL)
        _ = try await server.waitForExit()
        server = try ServerProcess(databasePath: database, extraArguments: arguments)
        try await server.start()
        // Registering again after an unregister queues a second confirmation: it fails the same way.
        #expect(try cli.run(["unregister", "--server", server.baseURL] + device).status == 0)
        #expect(try cli.run(["register", "--server", server.baseURL] + device).status == 0)
        #expect(try await eventually { try Self.outboxStatuses(database).filter { $0 == "failed" }.count == 2 })
        try await expectServing(server)
    }

    /// The process runs and `/healthz` answers 200.
    private func expectServing(_ server: ServerProcess) async throws {
        #expect(server.process.isRunning)
        #expect(try await HTTP.get(server.baseURL + "/healthz").0 == 200)
    }

    private static func outboxStatuses(_ database: String) throws -> [String] {
        let queue = try DatabaseQueue(path: database)
        defer { try? queue.close() }
        return try queue.read { try String.fetchAll($0, sql: "SELECT status FROM push_outbox ORDER BY id") }
    }

    private static func lastErrors(_ database: String) throws -> [String] {
        let queue = try DatabaseQueue(path: database)
        defer { try? queue.close() }
        return try queue.read {
            try String.fetchAll($0, sql: "SELECT last_error FROM push_outbox WHERE last_error IS NOT NULL ORDER BY id")
        }
    }
}
