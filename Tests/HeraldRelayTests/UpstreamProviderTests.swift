import Foundation
import HeraldCore
import Logging
import Synchronization
import Testing

@testable import HeraldRelay

/// The downstream's side of docs/protocol.md §7, against a scripted upstream.
@Suite struct UpstreamProviderTests {
    static let installation = "0b7c2a9e-3a57-4a7e-9f0e-1c7f3c4e2a10"
    static let key = "k3y+with/odd=chars"

    static func provider(_ transport: ScriptedTransport) -> UpstreamPushProvider {
        UpstreamPushProvider(
            transport: transport, upstream: "https://up.example/", installationID: installation, key: key,
            logger: Logger(label: "test"))
    }

    static func tokenAnswer(_ token: String = "t1", expiresIn: String = "3600") -> PushHTTPResponse {
        PushHTTPResponse(
            status: 200,
            body: Array(
                #"{"access_token":"\#(token)","token_type":"Bearer","expires_in":\#(expiresIn),"scope":"api.push"}"#
                    .utf8))
    }

    /// Answers every push of a request with `status` (by the id's last character for variety when nil).
    static func results(
        for request: PushHTTPRequest, retryAfter: String = "9", status: @escaping (String) -> String
    ) -> PushHTTPResponse {
        guard case .array(let pushes)? = RelayFixtures.json(request.body)?["pushes"] else {
            return PushHTTPResponse(status: 400)
        }
        let results = pushes.map { push -> JSONValue in
            let id = push["id"]?.stringValue ?? ""
            var members: [(key: String, value: JSONValue)] = [("id", .string(id)), ("status", .string(status(id)))]
            if status(id) == "retry" { members.append(("retryAfter", .number(retryAfter))) }
            return .object(members)
        }
        return PushHTTPResponse(status: 200, body: JSONValue.object([("results", .array(results))]).jsonBytes)
    }

    static func push(_ index: Int, platform: Platform = .ios) -> PushMessage {
        RelayFixtures.push(platform: platform, id: (0..<16).map { UInt8(($0 + index) % 256) })
    }

    /// The one push item of the last request sent.
    static func forwardedItem(_ transport: ScriptedTransport) throws -> JSONValue {
        let sent = try #require(transport.requests.last.flatMap { RelayFixtures.json($0.body) })
        guard case .array(let pushes)? = sent["pushes"], let item = pushes.first else {
            throw ForwardingError.noPushes
        }
        return item
    }

    enum ForwardingError: Error { case noPushes }

    static func accepting() -> ScriptedTransport {
        ScriptedTransport { request in
            request.url.hasSuffix("/token") ? Self.tokenAnswer() : Self.results(for: request) { _ in "sent" }
        }
    }

    @Test func concurrentPushesGoInBatchesOfAtMostAHundredWithOneToken() async throws {
        let transport = ScriptedTransport { request in
            request.url.hasSuffix("/v1/relay/token") ? Self.tokenAnswer() : Self.results(for: request) { _ in "sent" }
        }
        let provider = Self.provider(transport)
        let outcomes = await withTaskGroup(of: PushDelivery.self) { group in
            for index in 0..<150 { group.addTask { await provider.deliver(Self.push(index)) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.count == 150 && outcomes.allSatisfy { $0 == .sent })
        let tokenRequests = transport.requests.filter { $0.url == "https://up.example/v1/relay/token" }
        let pushRequests = transport.requests.filter { $0.url == "https://up.example/v1/relay/pushes" }
        #expect(tokenRequests.count == 1, "the token is cached")
        #expect(pushRequests.count >= 2 && pushRequests.count < 150, "batched, not one request a push")
        let sizes = pushRequests.map { request -> Int in
            guard case .array(let pushes)? = RelayFixtures.json(request.body)?["pushes"] else { return 0 }
            return pushes.count
        }
        #expect(sizes.allSatisfy { (1...100).contains($0) })
        #expect(sizes.reduce(0, +) == 150)
        #expect(pushRequests.allSatisfy { $0.header("authorization") == "Bearer t1" })
        // The token request is the form of RFC 6749 §4.4, the key percent-encoded.
        let form = String(decoding: try #require(tokenRequests.first).body, as: UTF8.self)
        #expect(form.contains("client_id=installation.\(Self.installation)"))
        #expect(form.contains("client_secret=k3y%2Bwith%2Fodd%3Dchars"))
        #expect(form.contains("grant_type=client_credentials"))
    }

    /// docs/protocol.md §4.3: the upstream's numbers are a peer's. A `retryAfter` is bounded however many
    /// digits it has (the retry policy then fails the push past its deadline) and ignored when it is not a
    /// non-negative integer; an `expires_in` no integer holds still gives a token, kept at most an hour.
    @Test(
        arguments: [
            ("9223372036854775807", RemoteNumber.secondsCeiling), ("99999999999999999999", RemoteNumber.secondsCeiling),
            ("-5", nil), ("1.5", nil), ("12", 12),
        ] as [(String, Int64?)])
    func theUpstreamsNumbersAreBoundedOrIgnored(_ number: String, _ wait: Int64?) async throws {
        let transport = ScriptedTransport { request in
            request.url.hasSuffix("/token")
                ? Self.tokenAnswer(expiresIn: number) : Self.results(for: request, retryAfter: number) { _ in "retry" }
        }
        let outcome = await Self.provider(transport).deliver(Self.push(0))
        #expect(outcome == .retryable(reason: "upstream", retryAfter: wait))
    }

    @Test func eachPushIsForwardedAsTheSection42PayloadWithItsIdAndExpiry() async throws {
        let transport = Self.accepting()
        #expect(await Self.provider(transport).deliver(Self.push(0, platform: .android)) == .sent)
        let item = try Self.forwardedItem(transport)
        #expect(item.objectMembers?.map(\.key) == ["id", "platform", "deviceToken", "payload", "expiresAt"])
        #expect(item["id"] == .string(APNsProvider.uuid(Array(0..<16))))
        #expect(item["platform"] == .string("android"))
        #expect(item["deviceToken"] == .string(RelayFixtures.iosToken))
        #expect(item["expiresAt"] == .number(String(RelayFixtures.deadline)))
        #expect(item["payload"]?["notification"]?["title"] == .string("Trade accepted"))
        #expect(item["payload"]?["data"]?["amsg"] == .string("Pay 0.1 ETH"))
        #expect(item["payload"]?["data"]?["sid"] == .string("42"))
    }

    /// docs/protocol.md §7: the options go under their §7 names, each only when the message has it.
    @Test func theOptionsAreForwardedUnderTheirSection7Names() async throws {
        let transport = Self.accepting()
        let push = RelayFixtures.push(
            priority: .normal, collapseID: "trade-17", timeToLive: 0, badge: 4, threadID: "0xChannel")
        #expect(await Self.provider(transport).deliver(push) == .sent)
        let item = try Self.forwardedItem(transport)
        #expect(
            item.objectMembers?.map(\.key) == [
                "id", "platform", "deviceToken", "payload", "expiresAt", "priority", "collapseId", "threadId", "ttl",
                "badge",
            ])
        #expect(item["priority"] == .string("normal") && item["collapseId"] == .string("trade-17"))
        #expect(
            item["threadId"] == .string("0xChannel") && item["ttl"] == .number("0") && item["badge"] == .number("4"))
        #expect(item["expiresAt"] == .number(String(RelayFixtures.deadline)), "the deadline, whatever the ttl")
    }

    /// docs/protocol.md §7 and §10: a read-sync push goes up as `"kind":"read"` with `{"unread","epoch"}`,
    /// no options (the upstream applies §10's own headers), so the badge reaches the phone unchanged.
    @Test func aReadSyncPushIsForwardedAsKindRead() async throws {
        let transport = Self.accepting()
        let push = RelayFixtures.push(
            content: .readSync(ReadSyncContent(unread: 3, epoch: 1_763_769_600_123)), priority: .normal,
            collapseID: ReadSyncContent.apnsCollapseID)
        #expect(await Self.provider(transport).deliver(push) == .sent)
        let item = try Self.forwardedItem(transport)
        #expect(item.objectMembers?.map(\.key) == ["id", "platform", "deviceToken", "kind", "payload", "expiresAt"])
        #expect(item["kind"] == .string("read") && item["platform"] == .string("ios"))
        #expect(item["payload"] == .object([("unread", .string("3")), ("epoch", .string("1763769600123"))]))
        #expect(
            ReadSyncContent(relayed: try #require(item["payload"]))
                == ReadSyncContent(unread: 3, epoch: 1_763_769_600_123))
    }

    /// §7 has no push type: the upstream sends alerts, so a background push is not forwarded as one.
    @Test func aBackgroundPushIsNotForwarded() async {
        let transport = Self.accepting()
        let outcome = await Self.provider(transport).deliver(RelayFixtures.push(pushType: .background))
        #expect(outcome == .failed(reason: "an APNs background push cannot go through an upstream relay"))
        #expect(transport.requests.isEmpty)
    }

    @Test func answersMapOntoTheOutboxRules() async throws {
        let statuses = ["sent", "dead", "retry", "failed"]
        let transport = ScriptedTransport { request in
            if request.url.hasSuffix("/token") { return Self.tokenAnswer() }
            return Self.results(for: request) { id in
                statuses[Int(String(id.last ?? "0"), radix: 16).map { $0 % 4 } ?? 0]
            }
        }
        let provider = Self.provider(transport)
        // apnsID bytes end in index + 15, so the UUID's last hex digit is (index + 15) % 16.
        let outcomes = await withTaskGroup(of: (Int, PushDelivery).self) { group in
            for index in 1...4 { group.addTask { (index, await provider.deliver(Self.push(index))) } }
            return await group.reduce(into: [Int: PushDelivery]()) { $0[$1.0] = $1.1 }
        }
        let kinds = outcomes.values.map { outcome -> String in
            switch outcome {
            case .sent: return "sent"
            case .deadToken: return "dead"
            case .retryable(_, let after): return after == 9 ? "retry" : "retry without 9"
            case .failed: return "failed"
            case .deferred: return "deferred"
            }
        }
        #expect(Set(kinds) == Set(statuses))
    }

    @Test func a401FetchesANewTokenOnceAndARefusedTokenRequestRetriesEveryPush() async throws {
        let tokens = Mutex(0)
        let transport = ScriptedTransport { request in
            if request.url.hasSuffix("/token") {
                let count = tokens.withLock {
                    $0 += 1; return $0
                }
                return Self.tokenAnswer("t\(count)")
            }
            if request.header("authorization") == "Bearer t1" { return PushHTTPResponse(status: 401) }
            return Self.results(for: request) { _ in "sent" }
        }
        #expect(await Self.provider(transport).deliver(Self.push(0)) == .sent)
        #expect(tokens.withLock { $0 } == 2)

        let refusing = ScriptedTransport { request in
            request.url.hasSuffix("/token")
                ? PushHTTPResponse(status: 401, body: Array(#"{"error":"invalid_client"}"#.utf8))
                : PushHTTPResponse(status: 500)
        }
        let outcome = await Self.provider(refusing).deliver(Self.push(0))
        guard case .retryable(let reason, let after) = outcome else {
            Issue.record("expected a retry, got \(outcome)")
            return
        }
        #expect(after == UpstreamPushProvider.refusedTokenBackoff)
        #expect(reason.contains("invalid_client"))
        #expect(!reason.contains(Self.key), "the key is never in a reason (they reach logs and the outbox)")
        #expect(refusing.requests.allSatisfy { $0.url.hasSuffix("/token") }, "no push is sent without a token")
    }

    @Test func requestLevelAnswersApplyToEveryPush() async throws {
        for (status, expected) in [(429, "retry"), (503, "retry"), (400, "failed"), (413, "failed")] {
            let transport = ScriptedTransport { request in
                request.url.hasSuffix("/token")
                    ? Self.tokenAnswer()
                    : PushHTTPResponse(
                        status: status, headers: [("retry-after", "17")],
                        body: Array(#"{"error":{"code":"x","message":"m"}}"#.utf8))
            }
            let outcome = await Self.provider(transport).deliver(Self.push(0))
            switch outcome {
            case .retryable(_, let after):
                #expect(expected == "retry" && after == 17, "\(status)")
            case .failed:
                #expect(expected == "failed", "\(status)")
            default:
                Issue.record("\(status): \(outcome)")
            }
        }
    }
}

/// `apns-id` (used by the downstream for its relayed items too): the queued bytes as a version-4 UUID.
@Suite struct APNsIDTests {
    @Test func anAPNsIDIsAVersion4UUIDOfTheQueuedBytes() {
        #expect(APNsProvider.uuid(Array(0..<16)) == "00010203-0405-4607-8809-0a0b0c0d0e0f")
        #expect(APNsProvider.uuid(Array(repeating: 0xff, count: 16)) == "ffffffff-ffff-4fff-bfff-ffffffffffff")
        // Fewer than 16 bytes (never queued so, but never a crash): zeros fill the rest.
        #expect(APNsProvider.uuid([0xab]) == "ab000000-0000-4000-8000-000000000000")
    }
}
