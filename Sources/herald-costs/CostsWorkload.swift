import CCallgrind
import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import HeraldRelay
import HeraldServer
import HeraldStore
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded

/// The fixed workload of the instruction-count guard (`scripts/costs/check.sh`): registrations, a
/// broadcast, and (docs/protocol.md §10) a broadcast filtered by subscribers' settings and mutes and a
/// type 4 through per-recipient buckets, all sent through Herald's real router, middleware and SQLite
/// store in this process, with fixed keys, nonces and clock, so that every run executes the same code on
/// the same bytes. Each measured phase is bracketed by callgrind client requests: under `valgrind
/// --tool=callgrind --instr-atstart=no` only the phases are counted, each dumped under its name.
struct CostsWorkload {
    /// The server's clock: fixed, so that every signed operation is valid and identical in every run.
    static let now: Int64 = 1_800_000_000
    static let audience = "herald-costs"

    let registrations: Int
    let subscribers: Int
    let folder: String

    struct Phase: Sendable {
        let name: String
        let operations: Int
        let unit: String
        let elapsed: Duration

        /// "registrations", "recipients", "pushes".
        var units: String { unit.hasSuffix("sh") ? unit + "es" : unit + "s" }
    }

    func run() async throws -> [Phase] {
        var configuration = HeraldSettings()
        configuration.operations.audience = Self.audience
        configuration.database.path = folder + "/costs.sqlite"
        configuration.http.rateLimit = 0
        // The defaults otherwise: setup confirmations on, as a server runs.
        let logger = Logger(label: "herald.costs", factory: { _ in SwiftLogNoOpLogHandler() })
        let store = try await StoreFactory.open(configuration.database.path, logger: logger)
        let state = ServerState(configuration: configuration, store: store, logger: logger, clock: { Self.now })
        let responder = HeraldServerApp.makeRouter(state).buildResponder()
        let channelKey = try Self.key("channel")
        try await store.saveChannel(
            ChannelRecord(
                address: channelKey.address, name: "Costs", icon: "https://costs.example/i.png",
                url: "https://costs.example", createdAt: 0))
        try await Self.seed(store, channel: channelKey.address, subscribers: subscribers)
        let bodies = try Self.registrationBodies(registrations)
        let broadcast = try Self.broadcastBody(channel: channelKey)
        let channel = NIOAsyncTestingChannel()

        var phases: [Phase] = []
        phases.append(
            try await measure("registrations", operations: registrations, unit: "registration") {
                for body in bodies {
                    try await Self.post(body, to: "/v1/devices", responder: responder, channel: channel, logger: logger)
                }
            })
        phases.append(
            try await measure("broadcast", operations: subscribers, unit: "recipient") {
                try await Self.post(
                    broadcast, to: "/v1/notifications", responder: responder, channel: channel, logger: logger)
            })
        // Every push the two phases queued (a setup confirmation per registration, one per recipient),
        // drained through the outbox and the APNs provider into a transport that answers 200 at once.
        let pushes = registrations + subscribers
        let outbox = PushOutboxService(
            state: state, providers: try Self.apnsProviders(logger: logger), batchSize: 100)
        // Claimed as the server's APNs lane claims them (every push here is for iOS).
        guard let apnsLane = PushProviders.lanes.first(where: { $0.contains(.ios) }) else {
            throw CostsError("the server has no lane for APNs")
        }
        phases.append(
            try await measure("pushes", operations: pushes, unit: "push") {
                var drained = 0
                while case let handled = try await outbox.drainOnce(platforms: apnsLane), handled > 0 {
                    drained += handled
                }
                guard drained == pushes else { throw CostsError("drained \(drained) pushes, not \(pushes)") }
            })
        // docs/protocol.md §10 on the same subscribers: a toggle and a threshold published, a third opted out
        // of each, a tenth muted (written before counting); then a broadcast naming the threshold, and a type 4
        // to the first 1,000, every recipient's bucket read and written.
        try await Self.seedControl(store, channel: channelKey, subscribers: subscribers)
        let controlled = try Self.notificationBody(
            channel: channelKey, nonce: 8,
            payload: NotificationDraft.payload(
                NotificationDraft(title: "Costs", body: "Above 50").broadcastPayload(),
                naming: #"{"id":"min","value":50}"#))
        phases.append(
            try await measure("controlled", operations: subscribers, unit: "recipient") {
                try await Self.post(
                    controlled, to: "/v1/notifications", responder: responder, channel: channel, logger: logger)
            })
        let subsetWallets = try (0..<Self.subsetRecipients(subscribers)).map { try Self.subscriberKey($0).address }
        let subset = try Self.notificationBody(
            channel: channelKey, nonce: 9,
            payload: NotificationDraft(title: "Costs", body: "To a thousand").targetedPayload(to: subsetWallets))
        phases.append(
            try await measure("subset", operations: subsetWallets.count, unit: "recipient") {
                try await Self.post(
                    subset, to: "/v1/notifications", responder: responder, channel: channel, logger: logger)
            })
        try await store.close()
        return phases
    }

    /// The type 4 of the "subset" phase: to the first 1,000 subscribers (§4.1's most), fewer if fewer.
    static func subsetRecipients(_ subscribers: Int) -> Int { min(subscribers, NotificationPayload.maximumRecipients) }

    /// Counts `body` alone: instrumentation on, counters zeroed, then dumped under `name` and off.
    private func measure(
        _ name: String, operations: Int, unit: String, _ body: () async throws -> Void
    ) async throws -> Phase {
        herald_callgrind_start()
        herald_callgrind_zero()
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        name.withCString { herald_callgrind_dump($0) }
        herald_callgrind_stop()
        return Phase(name: name, operations: operations, unit: unit, elapsed: elapsed)
    }

    /// One request through the router, as the HTTP server hands it over; a refusal ends the run,
    /// since a refused operation would cost less and pass the budget for the wrong reason.
    private static func post(
        _ body: [UInt8], to path: String, responder: some HTTPResponder<HeraldRequestContext>, channel: any Channel,
        logger: Logger
    ) async throws {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.contentLength] = String(body.count)
        let request = Request(
            head: HTTPRequest(method: .post, scheme: "http", authority: "localhost", path: path, headerFields: headers),
            body: RequestBody(buffer: ByteBuffer(bytes: body)))
        let context = HeraldRequestContext(source: .init(channel: channel, logger: logger))
        let response = try await responder.respond(to: request, context: context)
        // 200 for a registration, 202 for an accepted notification.
        guard response.status == .ok || response.status == .accepted else {
            throw CostsError("POST \(path) answered \(response.status.code)")
        }
    }

    /// Registrations by 1/16 as many wallets (under the per-wallet limit), each with its own token and
    /// nonce. Signatures are deterministic (RFC 6979), so the bodies are the same in every run.
    static func registrationBodies(_ count: Int) throws -> [[UInt8]] {
        let keys = try (0..<max(1, (count + 15) / 16)).map { try key("wallet-\($0)") }
        let domain = HeraldDomain(chainId: 1)
        return try (0..<count).map { index in
            let binding = DeviceBinding(
                action: .register, wallet: keys[index / 16].address, platform: .ios,
                deviceToken: String(format: "%064x", 0xC057_0000 + index), audience: audience,
                nonce: UInt256(UInt64(index + 1)), issuedAt: UInt256(UInt64(now - 10)),
                expiresAt: UInt256(UInt64(now + 290)))
            return Array(try binding.signed(with: keys[index / 16], scheme: .eip712, domain: domain).jsonText.utf8)
        }
    }

    static func key(_ label: String) throws -> PrivateKey {
        try PrivateKey(bytes: Keccak256.hash(Array("herald-costs-\(label)".utf8)))
    }

    /// The broadcast's audience: subscribers with one iOS binding each, written through the store's own
    /// path before counting starts. Their keys come from the index (any valid scalar will do).
    static func seed(_ store: any HeraldStore, channel: EthereumAddress, subscribers: Int) async throws {
        let retained = now + 660
        for index in 0..<subscribers {
            let key = try subscriberKey(index)
            _ = try await store.apply(
                SubscriptionChange(
                    action: .subscribe, channel: channel, subscriber: key.address, publicKey: key.publicKey,
                    nonce: UInt256(UInt64(2 * index)), operation: .random(), nonceRetainedUntil: retained, now: now))
            _ = try await store.apply(
                DeviceChange(
                    action: .register, wallet: key.address, platform: .ios,
                    deviceToken: String(format: "%064x", index + 1),
                    publicKey: key.publicKey, nonce: UInt256(UInt64(2 * index + 1)), operation: .random(),
                    nonceRetainedUntil: retained,
                    now: now, maxBindingsPerWallet: 20))
        }
    }

    static func subscriberKey(_ index: Int) throws -> PrivateKey {
        try PrivateKey(bytes: Keccak256.hash(Array("herald-costs-subscriber-\(index)".utf8)))
    }

    static func broadcastBody(channel: PrivateKey) throws -> [UInt8] {
        try notificationBody(
            channel: channel, nonce: 7,
            payload: NotificationDraft(title: "Costs", body: "The guard's broadcast").broadcastPayload())
    }

    static func notificationBody(channel: PrivateKey, nonce: UInt64, payload: String) throws -> [UInt8] {
        let operation = NotificationOperation(
            channel: channel.address, payload: payload, audience: audience, nonce: UInt256(nonce),
            issuedAt: UInt256(UInt64(now - 10)), expiresAt: UInt256(UInt64(now + 290)))
        return Array(
            try operation.signed(with: channel, scheme: .eip712, domain: HeraldDomain(chainId: 1)).jsonText.utf8)
    }

    /// The channel's toggle and threshold, then each subscriber's choice and mute through the store's
    /// write path, as the §10 routes write them: index % 3 == 0 turns the toggle off, == 1 sets the
    /// threshold to 90 (above the phase's 50: filtered), and one in ten mutes the channel for a day.
    static func seedControl(_ store: any HeraldStore, channel: PrivateKey, subscribers: Int) async throws {
        let retained = now + 660
        let list = try ChannelSettingsList.parse(
            #"[{"id":"news","kind":"toggle","default":true},{"id":"min","kind":"threshold","min":0,"max":100,"default":10}]"#
        )
        _ = try await store.apply(
            ChannelSettingsChange(
                channel: channel.address, list: list,
                signed: SignedChange(
                    publicKey: channel.publicKey, nonce: UInt256(UInt64(6)), operation: .random(),
                    nonceRetainedUntil: retained, now: now)))
        let off = try SettingChoices.parse(#"{"news":false}"#)
        let high = try SettingChoices.parse(#"{"min":90}"#)
        for index in 0..<subscribers {
            let key = try subscriberKey(index)
            let nonce = UInt64(1_000_000 + 2 * index)
            if index % 3 != 2 {
                _ = try await store.apply(
                    SubscriberSettingsChange(
                        channel: channel.address, subscriber: key.address, choices: index % 3 == 0 ? off : high,
                        signed: SignedChange(
                            publicKey: key.publicKey, nonce: UInt256(nonce), operation: .random(),
                            nonceRetainedUntil: retained, now: now)))
            }
            if index % 10 == 0 {
                _ = try await store.apply(
                    MuteChange(
                        channel: channel.address, subscriber: key.address, until: now + 86_400,
                        signed: SignedChange(
                            publicKey: key.publicKey, nonce: UInt256(nonce + 1), operation: .random(),
                            nonceRetainedUntil: retained,
                            now: now)))
            }
        }
    }
}

extension CostsWorkload {
    /// The APNs provider as `herald serve` makes it, its key fixed, its transport in memory.
    static func apnsProviders(logger: Logger) throws -> PushProviders {
        let key = try P256.Signing.PrivateKey(rawRepresentation: Keccak256.hash(Array("herald-costs-apns".utf8)))
        let tokens = APNsTokenAuthority(key: key, keyID: "COSTS00001", teamID: "COSTSTEAM1", clock: { now })
        let apns = APNsProvider(
            transport: AcceptingTransport(), tokens: tokens, topic: "org.herald.costs", logger: logger)
        return PushProviders(apns: apns, logger: logger)
    }

    /// Answers every push as APNs accepts one: 200 with its `apns-id`.
    struct AcceptingTransport: PushHTTPTransport {
        func send(_ request: PushHTTPRequest) async throws -> PushHTTPResponse {
            let id = request.headers.first { $0.0 == "apns-id" }?.1 ?? ""
            return PushHTTPResponse(status: 200, headers: [("apns-id", id)])
        }
    }
}

struct CostsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
