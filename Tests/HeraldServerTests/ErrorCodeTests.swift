import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HummingbirdTesting
import NIOCore
import Testing

/// Every error code the verifier server can produce, through the router, with its status and body.
@Suite struct ErrorCodeTests {
    typealias F = ServerFixture

    func expectError(_ response: TestResponse, _ code: APIErrorCode, sourceLocation: SourceLocation = #_sourceLocation)
    {
        #expect(response.errorCode == code.rawValue, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.status == code.httpStatus, sourceLocation: sourceLocation)
        #expect(response.headers[.contentType]?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
        #expect(response.json?["error"]?["message"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    }

    @Test func formErrorsOfStepOne() async throws {
        try await F().test { client in
            let good = try F.signed(F.binding())
            expectError(try await client.post("{"), .badRequest)
            expectError(try await client.post("[]"), .badRequest)
            expectError(
                try await client.post(good.replacingOccurrences(of: #""nonce":"42""#, with: #""nonce":42"#)),
                .badRequest)
            expectError(
                try await client.post(good.replacingOccurrences(of: #""nonce":"42""#, with: #""nonce":"042""#)),
                .badRequest)
            expectError(
                try await client.post(
                    good.replacingOccurrences(of: #""nonce":"42""#, with: #""nonce":"42","extra":"1""#)), .badRequest)
            expectError(try await client.post(good.replacingOccurrences(of: #""nonce":"42","#, with: "")), .badRequest)
            expectError(
                try await client.post(good.replacingOccurrences(of: #""register""#, with: #""bind""#)), .badRequest)
            expectError(
                try await client.post(
                    good.replacingOccurrences(of: #""signature":"0x"#, with: #""signature":0,"x":"0x"#)), .badRequest)
            expectError(
                try await client.post(good.replacingOccurrences(of: #""eip712""#, with: #""eip999""#)), .badRequest)
            let wallet = F.key.address.checksummed
            expectError(
                try await client.post(
                    good.replacingOccurrences(of: wallet, with: "0x" + wallet.dropFirst(2).reversed())), .invalidWallet)
            expectError(
                try await client.post(good.replacingOccurrences(of: #""ios""#, with: #""windows""#)), .invalidPlatform)
            expectError(
                try await client.post(good.replacingOccurrences(of: F.iosToken, with: "xyz")), .invalidDeviceToken)
            expectError(
                try await client.post(try F.signed(F.binding(audience: "https://elsewhere.example"))), .wrongAudience)
        }
    }

    @Test func timeRulesOfStepTwo() async throws {
        try await F().test { client in
            expectError(try await client.post(try F.signed(F.binding(issuedAt: F.now, expiresAt: F.now))), .badRequest)
            expectError(
                try await client.post(try F.signed(F.binding(nonce: 1, issuedAt: F.now + 61, expiresAt: F.now + 300))),
                .notYetValid)
            #expect(
                try await client.post(try F.signed(F.binding(nonce: 2, issuedAt: F.now + 60, expiresAt: F.now + 300)))
                    .status == .ok)
            expectError(
                try await client.post(try F.signed(F.binding(nonce: 3, issuedAt: F.now - 500, expiresAt: F.now))),
                .expired)
            expectError(
                try await client.post(try F.signed(F.binding(nonce: 4, issuedAt: F.now - 10, expiresAt: F.now + 591))),
                .validityTooLong)
            #expect(
                try await client.post(try F.signed(F.binding(nonce: 5, issuedAt: F.now - 10, expiresAt: F.now + 590)))
                    .status == .ok)
        }
    }

    @Test func theValidityWindowAndSkewAreConfigurable() async throws {
        try await F(configure: {
            $0.operations.maxValiditySeconds = 60; $0.operations.clockSkewSeconds = 0
        }).test { client in
            expectError(
                try await client.post(try F.signed(F.binding(issuedAt: F.now - 10, expiresAt: F.now + 51))),
                .validityTooLong)
            expectError(
                try await client.post(try F.signed(F.binding(issuedAt: F.now + 1, expiresAt: F.now + 30))), .notYetValid
            )
        }
    }

    @Test func signatureRulesOfStepThree() async throws {
        try await F().test { client in
            let good = try F.signed(F.binding())
            let signature = try #require(JSONParser.parse(good)["signature"]?.stringValue)
            for bad in [
                "0x", "0x" + String(repeating: "0", count: 130), String(signature.dropLast(2)) + "1d", "not hex",
            ] {
                expectError(try await client.post(good.replacingOccurrences(of: signature, with: bad)), .badSignature)
            }
            let highS = Self.highS(signature)
            expectError(try await client.post(good.replacingOccurrences(of: signature, with: highS)), .badSignature)
            expectError(try await client.post(try F.signed(F.binding(), by: F.other)), .signatureMismatch)
            expectError(try await client.post(try F.signed(F.binding(), chainId: 5)), .signatureMismatch)
            expectError(
                try await client.post(try F.signed(F.binding(), scheme: .eip191, chainId: 137)), .signatureMismatch)
        }
    }

    /// docs/protocol.md §11.2: the same operation again, however its addresses and `v` are spelled, is answered
    /// its first answer with `Idempotent-Replay: true`; another operation with the spent nonce, or the same
    /// message under the other scheme, is `409 replayed`.
    @Test func aRepeatIsAnsweredAsTheFirstTimeAndAnotherOperationIsAReplay() async throws {
        try await F().test { client in
            let envelope = try F.signed(F.binding(nonce: 9))
            let first = try await client.post(envelope)
            #expect(first.status == .ok)
            #expect(first.headers[.idempotentReplay] == nil)
            let wallet = F.key.address.checksummed
            let signature = try #require(JSONParser.parse(envelope)["signature"]?.stringValue)
            let v = signature.suffix(2)
            let otherV = v == "1b" ? "00" : "01"
            for copy in [
                envelope, envelope.replacingOccurrences(of: wallet, with: wallet.lowercased()),
                envelope.replacingOccurrences(of: signature, with: signature.dropLast(2) + otherV),
            ] {
                let again = try await client.post(copy)
                #expect(again.status == .ok)
                #expect(again.headers[.idempotentReplay] == "true")
                #expect(Array(again.body.readableBytesView) == Array(first.body.readableBytesView))
            }
            // The same message under EIP-191: another operation.
            expectError(try await client.post(try F.signed(F.binding(nonce: 9), scheme: .eip191)), .replayed)
            // Same nonce, other action and scheme, issuedAt written as a JSON integer: still spent.
            let unregister = try F.signed(F.binding(.unregister, nonce: 9), scheme: .eip191)
            let issued = String(F.now - 100)
            let respelled = unregister.replacingOccurrences(
                of: #""issuedAt":"\#(issued)""#, with: #""issuedAt":\#(issued)"#)
            #expect(respelled != unregister)
            expectError(try await client.post(respelled), .replayed)
        }
    }

    @Test func theBindingLimitIsForbidden() async throws {
        try await F(configure: { $0.bindings.maxPerWallet = 2 }).test { client in
            for index in 1...2 {
                let token = String(format: "%064x", index)
                #expect(
                    try await client.post(try F.signed(F.binding(token: token, nonce: UInt64(index)))).status == .ok)
            }
            expectError(
                try await client.post(try F.signed(F.binding(token: String(format: "%064x", 3), nonce: 3))), .forbidden)
            #expect(
                try await client.post(try F.signed(F.binding(token: String(format: "%064x", 1), nonce: 4))).status
                    == .ok)
        }
    }

    @Test func unknownRoutesAndMethods() async throws {
        try await F().test { client in
            expectError(try await client.get("/nope"), .notFound)
            expectError(try await client.get("/v1/users/x"), .notFound)
            expectError(try await client.get("/v1/devices"), .methodNotAllowed)
            expectError(try await client.execute(uri: "/v1/devices", method: .put), .methodNotAllowed)
            expectError(try await client.post("{}", uri: "/v1/info"), .methodNotAllowed)
            expectError(
                try await client.execute(
                    uri: "/v1/users/0x3f243FdacE01Cfd9719f7359c94BA11361f32471/pubkey", method: .delete),
                .methodNotAllowed)
        }
    }

    @Test func bodyLimitThenMediaType() async throws {
        try await F(configure: { $0.http.bodyLimit = 2048 }).test { client in
            let big = String(repeating: " ", count: 4096) + "{}"
            expectError(try await client.post(big), .payloadTooLarge)
            // Size is checked first: an oversized body with a wrong type is still 413.
            expectError(try await client.post(big, contentType: "text/plain"), .payloadTooLarge)
            let good = try F.signed(F.binding())
            expectError(try await client.post(good, contentType: nil), .unsupportedMediaType)
            expectError(try await client.post(good, contentType: "text/plain"), .unsupportedMediaType)
            expectError(
                try await client.post(good, contentType: "application/json; charset=latin1"), .unsupportedMediaType)
            #expect(try await client.post(good, contentType: "Application/JSON; charset=UTF-8").status == .ok)
        }
    }

    @Test func rateLimitAnswers429WithRetryAfter() async throws {
        try await F(configure: {
            $0.http.rateLimit = 0.01; $0.http.rateBurst = 2
        }).test { client in
            _ = try await client.post("{}")
            _ = try await client.post("{}")
            let limited = try await client.post("{}")
            expectError(limited, .rateLimited)
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            // GET routes are not limited.
            #expect(try await client.get("/v1/info").status == .ok)
        }
    }

    @Test func storageFailureIsInternalWithoutDetailsAndHealthIs503() async throws {
        try await F(store: FailingStore()).test { client in
            let response = try await client.post(try F.signed(F.binding()))
            expectError(response, .internal)
            #expect(response.json?["error"]?["message"]?.stringValue?.contains("disk on fire") == false)
            let health = try await client.get("/healthz")
            #expect(health.status == .serviceUnavailable)
            #expect(health.errorCode == "unavailable" && health.headers[.retryAfter] == "5")
        }
    }

    /// docs/protocol.md §3: storage that does not answer now is 503 `unavailable` with `Retry-After` on
    /// every route that reaches it, never a 500 that reads as a bug; the cause stays in the log.
    @Test(arguments: [StoreError.Code.unavailable, .closed])
    func storageThatDoesNotAnswerIs503WithRetryAfter(_ code: StoreError.Code) async throws {
        let store = FailingStore(failure: StoreError(code, "PostgreSQL at db.internal did not answer"))
        try await F(store: store).test { client in
            let response = try await client.post(try F.signed(F.binding()))
            expectError(response, .unavailable)
            #expect(response.status == .serviceUnavailable && response.headers[.retryAfter] == "5")
            #expect(response.json?["error"]?["message"]?.stringValue?.contains("db.internal") == false)
            let key = try await client.get("/v1/users/\(F.key.address.checksummed)/pubkey")
            #expect(key.status == .serviceUnavailable && key.errorCode == "unavailable")
            #expect(try await client.get("/healthz").status == .serviceUnavailable)
        }
    }

    @Test(arguments: [StoreError.Code.conflict, .corrupt, .internal])
    func anyOtherStorageFailureIsInternal(_ code: StoreError.Code) async throws {
        try await F(store: FailingStore(failure: StoreError(code, "stored public key is damaged"))).test { client in
            let response = try await client.post(try F.signed(F.binding()))
            expectError(response, .internal)
            #expect(response.headers[.retryAfter] == nil)
        }
    }

    @Test func everyCodeMapsToItsProtocolStatus() {
        let expected: [APIErrorCode: Int] = [
            .badRequest: 400, .invalidWallet: 400, .invalidPlatform: 400, .invalidDeviceToken: 400,
            .invalidSubscription: 400, .invalidSettings: 400, .invalidWebhook: 400,
            .wrongAudience: 400,
            .validityTooLong: 400, .badSignature: 400, .invalidPayload: 400, .fieldTooLong: 400, .expired: 401,
            .notYetValid: 401, .signatureMismatch: 401, .unauthorized: 401, .forbidden: 403, .notFound: 404,
            .methodNotAllowed: 405, .replayed: 409, .payloadTooLarge: 413, .unsupportedMediaType: 415,
            .rateLimited: 429,
            .internal: 500, .unavailable: 503,
        ]
        #expect(Set(expected.keys) == Set(APIErrorCode.allCases))
        for (code, status) in expected { #expect(code.httpStatus.code == status, "\(code)") }
    }

    /// (r, n − s, v ^ 1): the same signature with a high s.
    static func highS(_ hex: String) -> String {
        let bytes = try! Hex.decode(hex)
        let n = try! Hex.decode("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
        var s = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for i in stride(from: 31, through: 0, by: -1) {
            let difference = Int(n[i]) - Int(bytes[32 + i]) - borrow
            s[i] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return Hex.encode(Array(bytes[0..<32]) + s + [bytes[64] == 27 ? 28 : 27], prefix: true)
    }
}

/// A store whose every call fails, as a broken disk would.
struct FailingStore: HeraldStore {
    struct DiskOnFire: Error, CustomStringConvertible { var description: String { "disk on fire" } }
    /// What every call throws: by default an error that is no `StoreError` (a fault nobody classified).
    var failure: any Error = DiskOnFire()
    func apply(_ change: DeviceChange) async throws -> DeviceChangeOutcome { throw failure }
    func publicKey(of wallet: EthereumAddress) async throws -> PublicKey? { throw failure }
    func bindings(of wallet: EthereumAddress) async throws -> [DeviceBindingRecord] { throw failure }
    func bindingCount() async throws -> Int { throw failure }
    func webPushSubscription(of wallet: EthereumAddress, endpoint: String) async throws -> WebPushSubscription? {
        throw failure
    }
    func pruneNonces(expiredBefore cutoff: Int64) async throws -> Int { throw failure }
    func pruneBindings(lastSeenBefore cutoff: Int64) async throws -> Int { throw failure }
    func checkHealth() async throws { throw failure }
    var writerStatistics: WriterStatistics.Snapshot {
        .init(transactions: 0, writes: 0, busySeconds: 0, waitSeconds: 0, lanes: 1)
    }
    func addInstallation(_ installation: RelayInstallation) async throws { throw failure }
    func removeInstallation(id: String) async throws -> Bool { throw failure }
    func installations() async throws -> [RelayInstallation] { throw failure }
    func installation(id: String) async throws -> RelayInstallation? { throw failure }
    func relayTokenSecret(candidate: [UInt8]) async throws -> [UInt8] { throw failure }
    func countRelayOutcomes(installation: String, _ usage: RelayUsage) async throws { throw failure }
    func relayUsage(installation: String) async throws -> RelayUsage { throw failure }
    func apply(_ change: SubscriptionChange) async throws -> SubscriptionChangeOutcome { throw failure }
    func rememberPublicKey(_ key: PublicKey, of wallet: EthereumAddress, now: Int64) async throws { throw failure }
    func saveChannel(_ channel: ChannelRecord) async throws { throw failure }
    func removeChannel(_ address: EthereumAddress) async throws -> Bool { throw failure }
    func channel(_ address: EthereumAddress) async throws -> ChannelRecord? { throw failure }
    func channels() async throws -> [ChannelRecord] { throw failure }
    func subscriberCount(of channel: EthereumAddress) async throws -> Int { throw failure }
    func subscriptions(of subscriber: EthereumAddress) async throws -> [SubscriptionRecord] { throw failure }
    func submit(_ notification: NotificationSubmission) async throws -> NotificationOutcome { throw failure }
    func feed(of wallet: EthereumAddress, spam: Bool, limit: Int, offset: Int) async throws -> FeedPage {
        throw failure
    }
    func duePushes(now: Int64, limit: Int, platforms: Set<Platform>?) async throws -> [QueuedPush] { throw failure }
    func claimDuePushes(
        now: Int64, limit: Int, platforms: Set<Platform>?, owner: String, leaseUntil: Int64, after: OutboxPosition?
    )
        async throws -> [QueuedPush]
    { throw failure }
    func removeBindings(platform: Platform, deviceToken: String) async throws -> Int { throw failure }
    func record(_ results: [PushAttemptResult], owner: String?) async throws { throw failure }
    func pushCounts() async throws -> [String: Int] { throw failure }
    func queuedPushCount() async throws -> Int { throw failure }
    func queueBisqPush(_ push: BisqRelayPush) async throws -> Int64 { throw failure }
    func pushState(id: Int64) async throws -> PushState? { throw failure }
    func pushReport(sid: Int64) async throws -> PushReport? { throw failure }
    func pruneFinishedPushes(queuedBefore cutoff: Int64) async throws -> Int { throw failure }
    func pruneFeedItems(sentBefore cutoff: Int64) async throws -> RetentionCount { throw failure }
    func pruneFeedItems(beyondNewest keep: Int, receivedAfter after: Int64, limit: Int) async throws -> FeedTrim {
        throw failure
    }
    func pruneWalletKeys(storedBefore cutoff: Int64) async throws -> Int { throw failure }
    func pruneWalletBuckets(fullBefore cutoff: Int64) async throws -> Int { throw failure }
    func apply(_ change: ChannelSettingsChange) async throws -> ChannelSettingsOutcome { throw failure }
    func apply(_ change: SubscriberSettingsChange) async throws -> SubscriberSettingsOutcome { throw failure }
    func apply(_ change: MuteChange) async throws -> MuteOutcome { throw failure }
    func apply(_ change: ReadMarkChange) async throws -> ReadMarkOutcome { throw failure }
    func channelSettings(of channel: EthereumAddress) async throws -> ChannelSettingsList? { throw failure }
    func apply(_ change: DelegateChange) async throws -> DelegateOutcome { throw failure }
    func delegates(of channel: EthereumAddress) async throws -> [EthereumAddress] { throw failure }
    func apply(_ change: WebhookChange) async throws -> WebhookOutcome { throw failure }
    func claimWebhookBatch(
        now: Int64, maxAgeSeconds: Int64, owner: String, leaseUntil: Int64, limit: Int
    ) async throws -> WebhookBatch? { throw failure }
    func record(_ outcome: WebhookDeliveryOutcome, owner: String) async throws { throw failure }
    func queuedWebhookEventCount() async throws -> Int { throw failure }
    func webhook(of channel: EthereumAddress) async throws -> WebhookRecord? { throw failure }
    func webhookKey(generated: [UInt8]) async throws -> [UInt8] { throw failure }
    func close() async throws {}
    func prepareToServe() async throws -> Int { throw failure }
    func run() async throws {}
}
