import Foundation
import GRDB
import HeraldCore
import Testing

@Suite(.serialized) struct ServerEndToEndTests {
    static func temporaryDatabase() -> String {
        NSTemporaryDirectory() + "herald-e2e-\(UUID().uuidString)/herald.sqlite"
    }

    @Test func registerWithAKeystoreWalletAgainstARealServer() async throws {
        let server = try ServerProcess(databasePath: Self.temporaryDatabase(), extraArguments: ["--max-bindings", "1"])
        try await server.start()
        defer { server.kill(SIGKILL) }
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run(["wallet", "create", "--light"]).status == 0)
        let address = try cli.run(["wallet", "address"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let token = String(repeating: "ab", count: 32)

        let registered = try cli.run([
            "register", "--server", server.baseURL, "--platform", "ios", "--device-token", token, "--json",
        ])
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(registered.stdout.contains(#""status":"registered""#))
        let eip191 = try cli.run([
            "register", "--server", server.baseURL, "--platform", "ios", "--device-token", token, "--scheme", "eip191",
        ])
        #expect(eip191.status == 0, "\(eip191.stderr)")
        #expect(eip191.stdout.hasPrefix("registered"))

        // The server refuses a second token (limit 1): exit 3 with its code.
        let refused = try cli.run([
            "register", "--server", server.baseURL, "--platform", "android", "--device-token",
            String(repeating: "x", count: 40),
        ])
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("error: forbidden: "))

        // The public key is now published.
        let (status, body) = try await HTTP.get(server.baseURL + "/v1/users/\(address)/pubkey")
        #expect(status == 200)
        #expect(String(decoding: body, as: UTF8.self).contains("0x04"))

        #expect(
            try cli.run(["unregister", "--server", server.baseURL, "--platform", "ios", "--device-token", token]).stdout
                .hasPrefix("unregistered"))
        // Unreachable: exit 4. Bad token: exit 65 before any request.
        #expect(
            try cli.run(["register", "--server", "http://127.0.0.1:9", "--platform", "ios", "--device-token", token])
                .status == 4)
        #expect(
            try cli.run(["register", "--server", server.baseURL, "--platform", "ios", "--device-token", "12"]).status
                == 65)
        #expect(
            try cli.run(["register", "--server", server.baseURL, "--platform", "pager", "--device-token", token]).status
                == 64)
    }

    @Test func sigtermDrainsAndExitsCleanly() async throws {
        let server = try ServerProcess(databasePath: Self.temporaryDatabase())
        try await server.start()
        let (status, _) = try await HTTP.get(server.baseURL + "/healthz")
        #expect(status == 200)
        server.kill(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }

    @Test func noAcknowledgedRegistrationIsLostToSIGKILL() async throws {
        let database = Self.temporaryDatabase()
        let server = try ServerProcess(databasePath: database, extraArguments: ["--max-bindings", "10000"])
        try await server.start()

        // Pre-signed, distinct operations: 40 wallets, nonce = index.
        let wallets = (0..<40).map { _ in PrivateKey.generate() }
        let now = UInt64(Date().timeIntervalSince1970)
        let domain = HeraldDomain(chainId: 1)
        let total = 6000
        let operations: [(wallet: EthereumAddress, token: String, body: String)] = try (0..<total).map { index in
            let key = wallets[index % wallets.count]
            let token = String(format: "%064x", index)
            let binding = DeviceBinding(
                action: .register, wallet: key.address, platform: .ios, deviceToken: token, audience: "herald-test",
                nonce: UInt256(UInt64(index)), issuedAt: UInt256(now - 5), expiresAt: UInt256(now + 500))
            return (key.address, token, try binding.signed(with: key, scheme: .eip712, domain: domain).jsonText)
        }

        let acknowledged = Acknowledgements()
        let url = server.baseURL + "/v1/devices"
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<32 {
                group.addTask {
                    var index = worker
                    while index < total {
                        let operation = operations[index]
                        guard let (status, _) = try? await HTTP.post(url, json: operation.body) else { return }
                        if status == 200 { await acknowledged.add(operation.wallet, operation.token) }
                        index += 32
                    }
                }
            }
            group.addTask {
                // Kill mid-load, without warning, once a few hundred writes were acknowledged.
                while await acknowledged.count < 400 { try? await Task.sleep(for: .milliseconds(5)) }
                server.kill(SIGKILL)
            }
        }
        _ = try await server.waitForExit()
        let acked = await acknowledged.all
        #expect(acked.count >= 400)
        #expect(acked.count < total, "the kill came after every request: raise the load")

        // Every acknowledged binding is in the database after the crash (WAL recovery on open).
        let queue = try DatabaseQueue(path: database)
        let stored = try await queue.read { db in
            try Row.fetchAll(db, sql: "SELECT wallet, device_token FROM bindings").map { row in
                let wallet: Data = row["wallet"]
                let token: String = row["device_token"]
                return "\(Hex.encode(wallet)):\(token)"
            }
        }
        let storedSet = Set(stored)
        let missing = acked.filter { !storedSet.contains("\(Hex.encode($0.wallet.bytes)):\($0.token)") }
        #expect(missing.isEmpty, "\(missing.count) acknowledged registrations lost")
        try queue.close()

        // A restarted server still knows the acknowledged operations: the same again is answered as it was.
        let restarted = try ServerProcess(databasePath: database)
        try await restarted.start()
        defer { restarted.kill(SIGKILL) }
        let first = try #require(operations.first { op in acked.contains { $0.token == op.token } })
        let again = try await HTTP.exchange(restarted.baseURL + "/v1/devices", json: first.body)
        #expect(again.status == 200 && again.idempotentReplay)
        #expect((try? JSONParser.parse(Array(again.body)))?["status"] == .string("registered"))
    }
}

actor Acknowledgements {
    private(set) var all: [(wallet: EthereumAddress, token: String)] = []
    var count: Int { all.count }

    func add(_ wallet: EthereumAddress, _ token: String) { all.append((wallet, token)) }
}

@Suite struct ChannelCommandTests {
    @Test func addListUpdateRemoveOnTheDatabase() throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let database = cli.home.appendingPathComponent("server/herald.sqlite").path
        let address = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"
        #expect(
            try cli.run([
                "channel", "add", address, "--name", "Trades", "--url", "https://t.example", "--database", database,
            ]).status == 0)
        #expect(try cli.run(["channel", "add", address, "--name", "Trades v2", "--database", database]).status == 0)
        let listed = try cli.run(["channel", "list", "--json", "--database", database])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains(#""name":"Trades v2""#))
        #expect(listed.stdout.contains(address))
        #expect(try cli.run(["channel", "add", "0xnope", "--name", "x", "--database", database]).status == 64)
        #expect(try cli.run(["channel", "remove", address, "--database", database]).status == 0)
        #expect(try cli.run(["channel", "remove", address, "--database", database]).status == 64)
        #expect(try cli.run(["channel", "list", "--json", "--database", database]).stdout == "[]\n")
    }
}

@Suite struct SubscribeCommandTests {
    @Test func subscribeThroughAnInvitationOnceListAndUnsubscribe() async throws {
        let database = NSTemporaryDirectory() + "herald-sub-\(UUID().uuidString)/herald.sqlite"
        let server = try ServerProcess(databasePath: database)
        try await server.start()
        defer { server.kill(SIGKILL) }
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        #expect(try cli.run(["wallet", "create", "--light"]).status == 0)
        let channel = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"
        #expect(try cli.run(["channel", "add", channel, "--name", "Trades", "--database", database]).status == 0)
        let invite = try cli.run(["channel", "invite", channel, "--server", server.baseURL, "--database", database])
        #expect(invite.status == 0, "\(invite.stderr)")
        let url = invite.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.contains("?c_i="))

        let first = try cli.run(["subscribe", url])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("subscribed"))
        // Scanned twice: reused, nothing signed or sent.
        let second = try cli.run(["subscribe", url])
        #expect(second.status == 0)
        #expect(second.stdout.hasPrefix("already subscribed"))
        let listed = try cli.run(["subscriptions", "--server", server.baseURL, "--json"])
        #expect(listed.stdout.contains(channel))
        #expect(try cli.run(["unsubscribe", channel, "--server", server.baseURL]).stdout.hasPrefix("unsubscribed"))
        #expect(try cli.run(["subscriptions", "--server", server.baseURL, "--json"]).stdout == "[]\n")
        // An unknown channel is refused by the server (exit 3); a doctored invitation is bad input (65).
        let unknown = try cli.run([
            "subscribe", "0x3f243FdacE01Cfd9719f7359c94BA11361f32471", "--server", server.baseURL,
        ])
        #expect(unknown.status == 3)
        #expect(unknown.stderr.contains("not_found"))
        #expect(try cli.run(["subscribe", server.baseURL + "/invite?c_i=e30"]).status == 65)
    }
}
