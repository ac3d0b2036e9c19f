import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// docs/protocol.md §10: `POST /v1/channel-settings`, `/v1/subscriber-settings`, `/v1/mutes` and `/v1/read`.
/// Each verifies its envelope (steps 1–3, the form of `settings`, `sids` and `until` included), then the
/// store applies it with its nonce in one transaction, in §10's order of checks; a refusal spends nothing.
struct SubscriberControlController: Sendable {
    let signed: SignedRequests
    let store: any SubscriberControlStore
    let pushWakeup: PushWakeup
    let policy: DeliveryPolicy
    let bodyLimit: Int

    init(state: ServerState) {
        signed = state.signedRequests
        store = state.store
        pushWakeup = state.pushWakeup
        policy = state.configuration.deliveryPolicy
        bodyLimit = state.configuration.http.bodyLimit
    }

    var routes: RouteCollection<HeraldRequestContext> {
        let routes = RouteCollection(context: HeraldRequestContext.self)
        routes.on(RouteTable.channelSettings) { request, context in try await channelSettings(request, context) }
        routes.on(RouteTable.subscriberSettings) { request, context in try await subscriberSettings(request, context) }
        routes.on(RouteTable.mutes) { request, context in try await mute(request, context) }
        routes.on(RouteTable.read) { request, context in try await read(request, context) }
        return routes
    }

    /// Reads and verifies the body as `type`, with what every change carries.
    private func verify<Operation: SignedOperation>(
        _ request: Request, as type: Operation.Type
    ) async throws -> (operation: Operation, change: SignedChange) {
        let body = try await RequestBody.readJSON(request, limit: bodyLimit)
        let now = signed.clock()
        let verified = try signed.verified(body.readableBytesView, as: type, now: now)
        let change = SignedChange(
            publicKey: verified.publicKey, nonce: verified.operation.nonce ?? UInt256(0),
            operation: try signed.identity(of: verified),
            nonceRetainedUntil: signed.nonceRetention(expiresAt: verified.operation.expiresAt), now: now)
        return (verified.operation, change)
    }

    private func replayed(_ signer: EthereumAddress) -> APIError {
        signed.metrics.recordRejection(.replayed)
        return APIError(.replayed, "this nonce was already used by \(signer)")
    }

    private func refused(_ code: APIErrorCode, _ message: String) -> APIError {
        signed.metrics.recordRejection(code)
        return APIError(code, message)
    }

    private func channelSettings(_ request: Request, _ context: HeraldRequestContext) async throws -> Response {
        let (operation, signedChange) = try await verify(request, as: ChannelSettingsUpdate.self)
        let change = ChannelSettingsChange(channel: operation.channel, list: operation.list, signed: signedChange)
        let outcome = try await StoreCall.run(context, { try await store.apply(change) })
        if case .repeated(let first) = outcome { return signed.replay(try answer(first, operation)) }
        return try answer(outcome, operation)
    }

    private func answer(_ outcome: ChannelSettingsOutcome, _ operation: ChannelSettingsUpdate) throws -> Response {
        switch outcome {
        case .repeated: throw keptReplay()
        case .unknownChannel:
            throw refused(.forbidden, "\(operation.channel) is not a channel on this server")
        case .replayed: throw replayed(operation.channel)
        case .saved(let list):
            return JSONResponse.make(
                .object([("channel", .string(operation.channel.checksummed)), ("settings", list.json)]))
        }
    }

    private func subscriberSettings(_ request: Request, _ context: HeraldRequestContext) async throws -> Response {
        let (operation, signedChange) = try await verify(request, as: SubscriberSettingsUpdate.self)
        let change = SubscriberSettingsChange(
            channel: operation.channel, subscriber: operation.subscriber, choices: operation.choices,
            signed: signedChange)
        let outcome = try await StoreCall.run(context, { try await store.apply(change) })
        if case .repeated(let first) = outcome { return signed.replay(try answer(first, operation)) }
        return try answer(outcome, operation)
    }

    private func answer(_ outcome: SubscriberSettingsOutcome, _ operation: SubscriberSettingsUpdate) throws -> Response
    {
        switch outcome {
        case .repeated: throw keptReplay()
        case .notSubscribed:
            throw refused(.notFound, "\(operation.subscriber) does not subscribe to \(operation.channel)")
        case .refused(let rejection): throw refused(rejection.code, rejection.message)
        case .replayed: throw replayed(operation.subscriber)
        case .saved(let effective):
            return JSONResponse.make(
                .object([
                    ("channel", .string(operation.channel.checksummed)),
                    ("subscriber", .string(operation.subscriber.checksummed)),
                    ("settings", Self.json(effective)),
                ]))
        }
    }

    /// `{"<id>": value, …}` in the list's order: every setting with its effective value.
    static func json(_ effective: [EffectiveSetting]) -> JSONValue {
        .object(effective.map { ($0.setting.id, $0.setting.json(value: $0.value)) })
    }

    private func mute(_ request: Request, _ context: HeraldRequestContext) async throws -> Response {
        let (operation, signedChange) = try await verify(request, as: Mute.self)
        let change = MuteChange(
            channel: operation.channel, subscriber: operation.subscriber, until: operation.untilSeconds,
            signed: signedChange)
        let outcome = try await StoreCall.run(context, { try await store.apply(change) })
        if case .repeated(let first) = outcome { return signed.replay(try answer(first, operation)) }
        return try answer(outcome, operation)
    }

    private func answer(_ outcome: MuteOutcome, _ operation: Mute) throws -> Response {
        switch outcome {
        case .repeated: throw keptReplay()
        case .notSubscribed:
            throw refused(.notFound, "\(operation.subscriber) does not subscribe to \(operation.channel)")
        case .outOfRange:
            throw refused(.badRequest, "until must be 0 or a time after now and within ten years")
        case .replayed: throw replayed(operation.subscriber)
        case .muted(let until):
            return JSONResponse.make(
                .object([
                    ("channel", .string(operation.channel.checksummed)),
                    ("subscriber", .string(operation.subscriber.checksummed)),
                    ("mutedUntil", .number(String(until))),
                ]))
        }
    }

    private func read(_ request: Request, _ context: HeraldRequestContext) async throws -> Response {
        let (operation, signedChange) = try await verify(request, as: ReadMark.self)
        let change = ReadMarkChange(
            wallet: operation.wallet, sids: operation.sidList, upTo: operation.upToSid, signed: signedChange,
            policy: policy)
        let outcome = try await StoreCall.run(context, { try await store.apply(change) })
        switch outcome {
        case .replayed: throw replayed(operation.wallet)
        case .repeated(.marked(let unread, _)):
            return signed.replay(Self.readAnswer(operation.wallet, unread: unread))
        case .repeated: throw keptReplay()
        case .marked(let unread, let pushes):
            signed.metrics.recordReadMark(pushes: pushes)
            if pushes > 0 { pushWakeup.signal() }
            return Self.readAnswer(operation.wallet, unread: unread)
        }
    }

    private static func readAnswer(_ wallet: EthereumAddress, unread: Int) -> Response {
        JSONResponse.make(.object([("wallet", .string(wallet.checksummed)), ("unread", .number(String(unread)))]))
    }

    /// A kept answer is an applied operation's: one that reads back as anything else is a fault here.
    private func keptReplay() -> APIError { APIError(.internal, "an operation's kept answer is not an applied one") }
}
