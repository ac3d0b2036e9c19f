import Foundation
import HeraldCore
public import Logging
import Synchronization

/// Sends this server's pushes through an upstream Herald that holds the APNs and FCM credentials
/// (docs/protocol.md §7), for a self-hosted server that has none. Pushes are batched: those handed over within
/// a few milliseconds of each other go in one request of up to `batchLimit`. The upstream's answers map onto
/// this server's outbox rules: `dead` prunes, `retry` backs off (its `retryAfter` honoured), `failed`
/// fails.
public final class UpstreamPushProvider: PushProvider {
    public let name = "upstream"
    /// docs/protocol.md §7's most pushes in one request.
    public static let maximumBatch = 100
    /// How long the first push of a batch waits for others to join it.
    static let gathering = Duration.milliseconds(2)
    /// A refused token request: every due push is retried after this long.
    static let refusedTokenBackoff: Int64 = 60

    let transport: any PushHTTPTransport
    let upstream: String
    let tokens: UpstreamTokens
    let batchLimit: Int
    let logger: Logger

    private struct Waiting: Sendable {
        let id: String
        let item: JSONValue
        let continuation: CheckedContinuation<PushDelivery, Never>
    }
    private struct State {
        var waiting: [Waiting] = []
        var gathering = false
    }
    private let state = Mutex(State())

    public init(
        transport: any PushHTTPTransport, upstream: String, installationID: String, key: String,
        batchLimit: Int = maximumBatch, logger: Logger
    ) {
        self.transport = transport
        self.upstream = upstream.hasSuffix("/") ? String(upstream.dropLast()) : upstream
        tokens = UpstreamTokens(
            transport: transport, upstream: self.upstream, installationID: installationID, key: key)
        self.batchLimit = min(max(batchLimit, 1), Self.maximumBatch)
        self.logger = logger
    }

    public func deliver(_ message: PushMessage) async -> PushDelivery {
        // docs/protocol.md §7 forwards §4.2 payloads and §10's read-sync pushes; a Bisq push's body is Bisq's
        // own, which it cannot carry.
        let item: JSONValue
        let id = APNsProvider.uuid(message.id)
        switch message.content {
        case .notification(let content): item = Self.item(message, content: content, id: id)
        case .readSync(let content): item = Self.readSyncItem(message, content: content, id: id)
        case .bisq:
            return .failed(reason: "a Bisq push cannot go through an upstream relay: configure APNs and FCM here")
        }
        // Nor has it a push type: the upstream sends every push as an alert (§4.3).
        guard message.pushType == .alert else {
            return .failed(reason: "an APNs \(message.pushType.rawValue) push cannot go through an upstream relay")
        }
        return await withCheckedContinuation { continuation in
            let (full, startGathering) = state.withLock { state -> ([Waiting]?, Bool) in
                state.waiting.append(Waiting(id: id, item: item, continuation: continuation))
                if state.waiting.count >= self.batchLimit {
                    defer { state.waiting = [] }
                    return (state.waiting, false)
                }
                if state.gathering { return (nil, false) }
                state.gathering = true
                return (nil, true)
            }
            if let full { Task { await self.send(full) } }
            if startGathering {
                Task {
                    try? await Task.sleep(for: Self.gathering)
                    let batch = self.state.withLock { state -> [Waiting] in
                        state.gathering = false
                        defer { state.waiting = [] }
                        return state.waiting
                    }
                    if !batch.isEmpty { await self.send(batch) }
                }
            }
        }
    }

    /// One push of the request: `id`, `platform`, `deviceToken`, the §4.2 `payload` (already under this
    /// server's `push.content`), `expiresAt` (the deadline), then the options the message has, under
    /// §7's names; nothing §7 does not define.
    static func item(_ message: PushMessage, content: PushContent, id: String) -> JSONValue {
        let payload = JSONValue.object([
            ("notification", .object([("title", .string(content.title)), ("body", .string(content.body))])),
            ("data", .object(PushContent.object(content.data))),
        ])
        var members: [(key: String, value: JSONValue)] = [
            ("id", .string(id)), ("platform", .string(message.platform.rawValue)),
            ("deviceToken", .string(message.deviceToken)), ("payload", payload),
            ("expiresAt", .number(String(message.expiration))),
        ]
        if let priority = message.priority { members.append(("priority", .string(priority.rawValue))) }
        if let collapseID = message.collapseID { members.append(("collapseId", .string(collapseID))) }
        if let threadID = message.threadID { members.append(("threadId", .string(threadID))) }
        if let timeToLive = message.timeToLive { members.append(("ttl", .number(String(timeToLive)))) }
        if let badge = message.badge { members.append(("badge", .number(String(badge)))) }
        return .object(members)
    }

    /// A read-sync push (§7 `"kind":"read"`): its payload is `{"unread","epoch"}`; the upstream sends it with
    /// §10's own headers and bodies.
    static func readSyncItem(_ message: PushMessage, content: ReadSyncContent, id: String) -> JSONValue {
        .object([
            ("id", .string(id)), ("platform", .string(message.platform.rawValue)),
            ("deviceToken", .string(message.deviceToken)), ("kind", .string("read")),
            ("payload", content.relayedPayload), ("expiresAt", .number(String(message.expiration))),
        ])
    }

    /// One request for the batch (a second after a 401, with a fresh token); every waiter answered.
    private func send(_ batch: [Waiting]) async {
        let answers = await exchange(batch)
        for waiting in batch {
            waiting.continuation.resume(
                returning: answers[waiting.id]
                    ?? .retryable(reason: "the upstream answered without this push", retryAfter: nil))
        }
    }

    private func exchange(_ batch: [Waiting]) async -> [String: PushDelivery] {
        func all(_ delivery: PushDelivery) -> [String: PushDelivery] {
            Dictionary(batch.map { ($0.id, delivery) }, uniquingKeysWith: { first, _ in first })
        }
        let body = JSONValue.object([("pushes", .array(batch.map(\.item)))]).jsonBytes
        do {
            var token = try await tokens.token()
            var response = try await transport.send(request(body, token: token))
            if response.status == 401 {
                tokens.invalidate(token)
                token = try await tokens.token()
                response = try await transport.send(request(body, token: token))
            }
            return Self.classify(response, all: all)
        } catch let refused as UpstreamTokens.Refused {
            logger.warning("upstream relay: \(refused.description); pushes wait")
            return all(.retryable(reason: refused.description, retryAfter: Self.refusedTokenBackoff))
        } catch {
            return all(
                .retryable(reason: "upstream unreachable: \(String(describing: error).prefix(120))", retryAfter: nil))
        }
    }

    private func request(_ body: [UInt8], token: String) -> PushHTTPRequest {
        PushHTTPRequest(
            url: upstream + "/v1/relay/pushes",
            headers: [("authorization", "Bearer " + token), ("content-type", "application/json")], body: body)
    }

    /// The upstream's answer, per push id; `everyone` gives one answer to the whole batch.
    static func classify(
        _ response: PushHTTPResponse, all everyone: (PushDelivery) -> [String: PushDelivery]
    ) -> [String: PushDelivery] {
        let json = try? JSONParser.parse(response.body)
        let code = json?["error"]?["code"]?.stringValue ?? ""
        let described = "upstream \(response.status)\(code.isEmpty ? "" : " " + code)"
        switch response.status {
        case 200:
            guard case .array(let results)? = json?["results"] else {
                return everyone(.retryable(reason: "upstream answered 200 without results", retryAfter: nil))
            }
            var answers: [String: PushDelivery] = [:]
            for result in results {
                guard case .string(let id)? = result["id"] else { continue }
                let reason = result["reason"]?.stringValue ?? "upstream"
                switch result["status"]?.stringValue {
                case "sent": answers[id] = .sent
                case "dead": answers[id] = .deadToken(reason: reason)
                case "retry":
                    // Bounded like a Retry-After header: the upstream is a peer, not this process.
                    var after: Int64?
                    if case .number(let text)? = result["retryAfter"] { after = RemoteNumber.seconds(text) }
                    answers[id] = .retryable(reason: reason, retryAfter: after)
                default: answers[id] = .failed(reason: reason)
                }
            }
            return answers
        case 401, 429, 500...599:
            return everyone(.retryable(reason: described, retryAfter: response.retryAfter))
        default:
            return everyone(.failed(reason: described))
        }
    }
}

extension UpstreamPushProvider {
    /// The batch for a server sending `concurrency` pushes at once: half of them, so that two requests
    /// are in flight and the upstream sends one while this server records the other's outcomes and
    /// claims more (the outbox refills a lane once half its pushes are back). With one batch of all of
    /// them the two servers took turns: 2,600–2,800 pushes/s at a concurrency of 100, against
    /// 3,400–4,300 with halves and 3,000–3,700 with quarters (docs/benchmarks.md).
    public static func batchLimit(forConcurrency concurrency: Int) -> Int {
        min(max(concurrency / 2, 1), maximumBatch)
    }
}
