import Foundation
import HeraldCore
import HeraldTesting
import Testing

/// docs/protocol.md §8 end to end: `herald serve --bisq-relay` in front of the APNs and FCM fakes, `herald bisq`
/// as the Bisq desktop and `herald inbox ingest --bisq-key` as the phone, reading what the fakes received.
@Suite(.serialized) struct BisqEndToEndTests {
    static let key = "029d9cb9d9124b42bdf263ed4521169d"
    static let iosToken = "ef8aedde832733d5ee175df7240183a30178b2dd4a4cb97e9cf0f0c10b95a187"
    static let androidToken =
        "cEcb7vlj_SE:APA91bFYGqp_wsNv1OLHE3AeqUySkdUiNeuPv5yFmgGuOWqEMVycQrwPom8oq1iFNPbp7raLbPxC4cxW99yFmhH8fiey"
    static let pseudoWallet = BisqKey.pseudoWallet(forKey: key)

    /// Both fakes, a relay server for them, and one home playing the desktop and the phone.
    final class Setup: @unchecked Sendable {
        let folder = NSTemporaryDirectory() + "herald-bisq-\(UUID().uuidString)"
        let fakes: PushFakes
        var apns: FakeAPNs { fakes.apns }
        var fcm: FakeFCM { fakes.fcm }
        let server: ServerProcess
        let cli: CLIRunner
        private let dropDatabase: @Sendable () -> Void

        init(_ backend: TestBackend = .sqlite) async throws {
            fakes = try await PushFakes(folder: folder)
            let made = try backend.make("bisq")
            dropDatabase = made.drop
            server = try ServerProcess(
                databasePath: made.database,
                extraArguments: fakes.serverArguments + ["--bisq-relay"])
            try await server.start()
            cli = try CLIRunner()
        }

        /// `herald inbox ingest --bisq-key` of a push as the fake received it, with `--json`.
        func ingest(_ body: [UInt8], key: String = BisqEndToEndTests.key) throws -> CLIRunner.Output {
            try cli.run(["inbox", "ingest", "--bisq-key", key, "--json"], stdin: String(decoding: body, as: UTF8.self))
        }

        func finish() {
            server.kill(SIGKILL)
            fakes.stop()
            cli.cleanUp()
            try? FileManager.default.removeItem(atPath: folder)
            dropDatabase()
        }
    }

    @Test(arguments: TestBackend.available)
    func anIPhoneIsPairedSentToAndErasedThroughTheFakeAPNs(_ backend: TestBackend) async throws {
        let setup = try await Setup(backend)
        defer { setup.finish() }
        let pairing = "iOS|iPhone 15|\(Self.key)|\(Self.iosToken)"
        let paired = try setup.cli.run(["bisq", "pair", pairing, "--server", setup.server.baseURL])
        #expect(paired.status == 0, "\(paired.stderr)")
        #expect(try await eventually { setup.apns.received.count == 1 })
        let setupPush = try #require(setup.apns.received.first)
        #expect(setupPush.problems.isEmpty, "\(setupPush.problems)")
        #expect(setupPush.deviceToken == Self.iosToken && setupPush.path.hasPrefix("/3/device/"))
        #expect(setupPush.json?["aps"]?["alert"]?["loc-key"] == .string("notification"))
        #expect(setupPush.json?["aps"]?["content-available"] == .number("1"))
        #expect(setupPush.json?["aps"]?["sound"] == nil && setupPush.headers["apns-priority"] == "5")
        #expect(setupPush.json?["encrypted"]?.stringValue?.hasPrefix("BisqMessageiOS|") == true)
        let confirmation = try setup.ingest(setupPush.body)
        #expect(confirmation.status == 0, "\(confirmation.stderr)")
        #expect(try JSONParser.parse(confirmation.stdout)["type"] == .string("SETUP_CONFIRMATION"))

        // The phone book: 0600, and no key in what `phones` prints.
        let book = setup.cli.home.appendingPathComponent("bisq.json").path
        let mode = try FileManager.default.attributesOfItem(atPath: book)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let phones = try setup.cli.run(["bisq", "phones", "--json"])
        #expect(phones.status == 0 && phones.stdout.contains("iPhone 15") && !phones.stdout.contains(Self.key))

        let sent = try setup.cli.run([
            "bisq", "send", "--type", "TRADE", "--title", "Trade accepted", "--message", "Start the payment.",
            "--tx", "8b1c", "--sound",
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(try await eventually { setup.apns.received.count == 2 })
        let trade = setup.apns.received[1]
        #expect(trade.problems.isEmpty && trade.headers["apns-priority"] == "10")
        #expect(trade.json?["aps"]?["sound"] == .string("default"))
        let read = try setup.ingest(trade.body)
        #expect(read.status == 0, "\(read.stderr)")
        let message = try JSONParser.parse(read.stdout)
        #expect(message["type"] == .string("TRADE") && message["title"] == .string("Trade accepted"))
        #expect(message["message"] == .string("Start the payment.") && message["txId"] == .string("8b1c"))
        // Cached once as a type-3 row of the pairing's pseudo-wallet, however often it arrives.
        #expect(try setup.ingest(trade.body).status == 0)
        let listed = try setup.cli.run(["inbox", "list", "--wallet", Self.pseudoWallet, "--json"])
        guard case .array(let rows) = try JSONParser.parse(listed.stdout) else {
            Issue.record("inbox list printed \(listed.stdout) \(listed.stderr)")
            return
        }
        #expect(rows.count == 1)
        #expect(rows.first?["type"] == .number("3") && rows.first?["app"] == .string("Bisq"))
        #expect(
            rows.first?["asub"] == .string("Trade accepted") && rows.first?["amsg"] == .string("Start the payment."))
        #expect(rows.first?["epoch"] == message["sentDate"] && rows.first?["sid"] == .null)

        // A wrong key does not decrypt it: exit 65, nothing cached.
        #expect(try setup.ingest(trade.body, key: String(repeating: "0", count: 32)).status == 65)

        let removed = try setup.cli.run(["bisq", "remove", "iPhone 15"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try await eventually { setup.apns.received.count == 3 })
        let erase = try setup.ingest(setup.apns.received[2].body)
        #expect(try JSONParser.parse(erase.stdout)["type"] == .string("ERASE"))
        let after = try setup.cli.run(["inbox", "list", "--wallet", Self.pseudoWallet, "--json"])
        #expect(after.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        #expect(
            try setup.cli.run(["bisq", "phones", "--json"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                == "[]")
    }

    @Test func anAndroidPhoneGetsDataOnlyPushesThroughTheFakeFCM() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let pairing = "android|Pixel 8|\(Self.key)|\(Self.androidToken)"
        let paired = try setup.cli.run(["bisq", "pair", pairing, "--server", setup.server.baseURL, "--name", "pixel"])
        #expect(paired.status == 0, "\(paired.stderr)")
        #expect(try await eventually { setup.fcm.received.count == 1 })
        let setupPush = try #require(setup.fcm.received.first)
        #expect(setupPush.problems.isEmpty, "\(setupPush.problems)")
        #expect(setupPush.message?["token"] == .string(Self.androidToken))
        #expect(setupPush.message?["notification"] == nil)
        #expect(setupPush.message?["android"]?["priority"] == .string("normal"))
        #expect(setupPush.message?["data"]?["encrypted"]?.stringValue?.hasPrefix("BisqMessageAndroid|") == true)
        #expect(try JSONParser.parse(try setup.ingest(setupPush.body).stdout)["type"] == .string("SETUP_CONFIRMATION"))

        let sent = try setup.cli.run([
            "bisq", "send", "--type", "PRICE", "--title", "BTC/EUR 61 234,50 €", "--message", "above your limit 🚀",
            "--phone", "pixel",
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(try await eventually { setup.fcm.received.count == 2 })
        let price = setup.fcm.received[1]
        #expect(price.problems.isEmpty, "\(price.problems)")
        let read = try setup.ingest(price.body)
        #expect(read.status == 0, "\(read.stderr)")
        let message = try JSONParser.parse(read.stdout)
        #expect(message["type"] == .string("PRICE") && message["message"] == .string("above your limit 🚀"))
    }

    @Test func thePostRouteAnswersIsUnregisteredOnA410AndAnInvalidPairingChangesNothing() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let refused = try setup.cli.run([
            "bisq", "pair", "iOS|iPhone|short|\(Self.iosToken)", "--server", setup.server.baseURL,
        ])
        #expect(refused.status == 65 && refused.stderr.contains("key"))
        #expect(!FileManager.default.fileExists(atPath: setup.cli.home.appendingPathComponent("bisq.json").path))

        let body = #"{"encrypted":"BisqMessageiOS|0123456789abcdef|QUJDREVGR0hJSktMTU5PUA==","isUrgent":true}"#
        let (okStatus, okAnswer) = try await HTTP.post(
            setup.server.baseURL + "/v1/apns/device/\(Self.iosToken)", json: body)
        #expect(okStatus == 200)
        #expect(String(decoding: okAnswer, as: UTF8.self) == #"{"isUnregistered":false}"#)

        setup.apns.enqueue(.reject(status: 410, reason: "Unregistered"))
        let (status, answer) = try await HTTP.post(
            setup.server.baseURL + "/v1/apns/device/\(Self.iosToken)", json: body)
        #expect(status == 200)
        let json = try JSONParser.parse(Array(answer))
        #expect(json["isUnregistered"] == .bool(true))
        #expect(json["errorMessage"] == .string("APNs 410 Unregistered"))

        let (fcmStatus, fcmAnswer) = try await HTTP.post(
            setup.server.baseURL + "/v1/fcm/device/\(Self.androidToken)", json: body)
        #expect(fcmStatus == 200)
        #expect(String(decoding: fcmAnswer, as: UTF8.self) == #"{"isUnregistered":false}"#)
        #expect(
            setup.fcm.received.last?.message?["data"]?["encrypted"]?.stringValue?.hasPrefix("BisqMessageiOS|") == true)
    }

    @Test func aPhoneStaysWhenNoConfirmationOrEraseCanBeSent() async throws {
        let setup = try await Setup()
        defer { setup.finish() }
        let book = setup.cli.home.appendingPathComponent("bisq.json")
        let pairing = "iOS|iPhone 15|\(Self.key)|\(Self.iosToken)"
        // Nothing listens on port 1: the confirmation cannot go, so nothing is stored.
        let unreachable = try setup.cli.run(["bisq", "pair", pairing, "--server", "http://127.0.0.1:1"])
        #expect(unreachable.status == 4, "\(unreachable.stderr)")
        #expect(!FileManager.default.fileExists(atPath: book.path))

        #expect(try setup.cli.run(["bisq", "pair", pairing, "--server", setup.server.baseURL]).status == 0)
        // The relay it was paired through goes away: ERASE cannot be sent, and the phone is kept.
        let text = try String(contentsOf: book, encoding: .utf8)
        try Data(text.replacingOccurrences(of: setup.server.baseURL, with: "http://127.0.0.1:1").utf8).write(to: book)
        let kept = try setup.cli.run(["bisq", "remove", "iPhone 15"])
        #expect(kept.status == 4, "\(kept.stderr)")
        #expect(try setup.cli.run(["bisq", "phones"]).stdout.contains("iPhone 15"))
        let forgotten = try setup.cli.run(["bisq", "remove", "iPhone 15", "--no-erase"])
        #expect(forgotten.status == 0, "\(forgotten.stderr)")
        #expect(try setup.cli.run(["bisq", "phones"]).stdout.contains("no phones paired"))
    }

    /// PostgreSQL's text refuses U+0000: a message holding it once failed its insert with a 500 there.
    @Test(arguments: TestBackend.available)
    func aMessageHoldingNULIsRefusedWith400BeforeTheDatabase(_ backend: TestBackend) async throws {
        let setup = try await Setup(backend)
        defer { setup.finish() }
        let message = Hex.encode(Array("BisqMessageiOS|2ef5ba7d36c64aed|abc\u{0}def".utf8))
        let (legacy, legacyBody) = try await HTTP.get(
            setup.server.baseURL + "/relay?isAndroid=false&isProduction=true&isContentAvailable=true&snd=false"
                + "&token=\(Hex.encode(Array(Self.iosToken.utf8)))&msg=\(message)")
        #expect(legacy == 400, "\(String(decoding: legacyBody, as: UTF8.self))")
        #expect(String(decoding: legacyBody, as: UTF8.self).contains("U+0000"))
        let (post, postBody) = try await HTTP.post(
            setup.server.baseURL + "/v1/apns/device/\(Self.iosToken)", json: #"{"encrypted":"abc\u0000def"}"#)
        #expect(post == 400, "\(String(decoding: postBody, as: UTF8.self))")
        #expect(try JSONParser.parse(Array(postBody))["error"]?["code"] == .string("bad_request"))
        // The server is still up and sent nothing.
        #expect(try await HTTP.get(setup.server.baseURL + "/healthz").0 == 200)
        #expect(setup.apns.received.isEmpty)
    }
}
