import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `GET /v1/channels/{channel}`, `POST /v1/subscriptions`, `GET /v1/users/{wallet}/subscriptions`.
enum SubscriptionRoutes {
    static func register(on router: Router<HeraldRequestContext>, state: ServerState) {
        router.on(RouteTable.channel) { _, context in try await getChannel(context: context, state: state) }
        router.on(RouteTable.subscriptions) { request, context in
            try await postSubscription(request, context: context, state: state)
        }
        router.on(RouteTable.userSubscriptions) { request, context in
            try await getSubscriptions(request, context: context, state: state)
        }
    }

    static func getChannel(context: HeraldRequestContext, state: ServerState) async throws -> Response {
        let address = try PathParameter.wallet(context, "channel")
        guard let channel = try await StoreCall.run(context, { try await state.store.channel(address) }) else {
            throw APIError(.notFound, "no channel \(address)")
        }
        let subscribers = try await StoreCall.run(context) { try await state.store.subscriberCount(of: address) }
        return JSONResponse.make(
            .object([
                ("channel", .string(channel.address.checksummed)), ("name", .string(channel.name)),
                ("icon", .string(channel.icon)), ("url", .string(channel.url)),
                ("subscribers", .number(String(subscribers))),
            ]))
    }

    static func postSubscription(
        _ request: Request, context: HeraldRequestContext, state: ServerState
    ) async throws -> Response {
        let body = try await RequestBody.readJSON(request, limit: state.configuration.bodyLimit)
        let now = state.clock()
        let verified = try state.verified(body.readableBytesView, as: Subscription.self, now: now)
        let operation = verified.operation
        let change = SubscriptionChange(
            action: operation.action == .subscribe ? .subscribe : .unsubscribe, channel: operation.channel,
            subscriber: operation.subscriber, publicKey: verified.publicKey, nonce: operation.nonceValue,
            nonceRetainedUntil: state.nonceRetention(expiresAt: operation.expiresAt),
            now: now)
        let outcome = try await StoreCall.run(context) { try await state.store.apply(change) }
        let status: String
        switch outcome {
        case .subscribed: status = "subscribed"
        case .unsubscribed: status = "unsubscribed"
        case .unknownChannel: throw APIError(.notFound, "no channel \(operation.channel)")
        case .replayed:
            state.metrics.recordRejection(.replayed)
            throw APIError(.replayed, "this nonce was already used by \(operation.subscriber)")
        }
        return JSONResponse.make(
            .object([
                ("channel", .string(operation.channel.checksummed)),
                ("subscriber", .string(operation.subscriber.checksummed)),
                ("status", .string(status)),
            ]))
    }

    static func getSubscriptions(
        _ request: Request, context: HeraldRequestContext, state: ServerState
    ) async throws -> Response {
        let wallet = try PathParameter.wallet(context, "wallet")
        _ = try await FeedAccessCheck.authorize(request, wallet: wallet, context: context, state: state)
        let records = try await StoreCall.run(context) { try await state.store.subscriptions(of: wallet) }
        let items = records.map { record in
            JSONValue.object([
                ("channel", .string(record.channel.checksummed)), ("name", .string(record.name)),
                ("since", .number(String(record.since))),
            ])
        }
        return JSONResponse.make(.object([("subscriptions", .array(items))]))
    }
}

/// A wallet-address path parameter in any wallet form (percent-encoded or not).
enum PathParameter {
    static func wallet(_ context: HeraldRequestContext, _ name: String) throws -> EthereumAddress {
        let raw = context.parameters.get(name) ?? ""
        guard let wallet = try? EthereumAddress(parsing: raw.removingPercentEncoding ?? raw) else {
            throw APIError(.invalidWallet, "\(name) is not a wallet address")
        }
        return wallet
    }
}

/// Runs a storage call; a failure is logged with its cause and answered `500 internal` without it.
enum StoreCall {
    static func run<T: Sendable>(_ context: HeraldRequestContext, _ body: () async throws -> T) async throws -> T {
        try await run(logger: context.logger, body)
    }

    static func run<T: Sendable>(logger: Logger, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw refusal(error, logger: logger)
        }
    }

    /// Seconds a client is told to wait when storage does not answer: long enough for a database restart
    /// to show, short enough that nothing waits long once it is back.
    static let retryAfterSeconds = 5
    private static let unavailableLog = LogThrottle(interval: .seconds(10))

    /// docs/protocol.md §3: storage that does not answer now (the database down or restarting, the disk
    /// full) is `503 unavailable` with `Retry-After`; anything else a store throws is `500 internal`.
    static func refusal(_ error: any Error, logger: Logger) -> APIError {
        if let error = error as? StoreError, error.isTransient {
            // While the database is down every request fails alike: one line per interval, not a flood.
            if let suppressed = unavailableLog.due() {
                logger.warning("storage unavailable (\(suppressed) more such answers since the last line): \(error)")
            }
            return APIError(.unavailable, "storage is unavailable; retry later", retryAfter: retryAfterSeconds)
        }
        logger.error("storage failed: \(error)")
        return APIError(.internal, "storage failed")
    }
}

/// PROTOCOL §3: a private read carries a FeedAccess envelope in `Authorization: Herald <base64url>`.
/// A missing or unreadable header, or a path wallet other than the signer, is `401 unauthorized`;
/// faults inside the envelope get the codes of §2.3. An accepted one refreshes the public key.
enum FeedAccessCheck {
    /// A read of `wallet`'s data: the FeedAccess must be signed by that wallet.
    static func authorize(
        _ request: Request, wallet: EthereumAddress, context: HeraldRequestContext, state: ServerState
    ) async throws -> VerifiedOperation<FeedAccess> {
        let verified = try await verify(request, context: context, state: state)
        guard verified.signer == wallet else {
            throw APIError(.unauthorized, "this FeedAccess was signed by \(verified.signer), not \(wallet)")
        }
        return verified
    }

    /// For reads whose path names no wallet: any valid FeedAccess; the caller checks its signer.
    static func authorizeAnySigner(
        _ request: Request, context: HeraldRequestContext, state: ServerState
    ) async throws -> EthereumAddress {
        try await verify(request, context: context, state: state).signer
    }

    private static func verify(
        _ request: Request, context: HeraldRequestContext, state: ServerState
    ) async throws -> VerifiedOperation<FeedAccess> {
        guard let header = request.headers[.authorization] else {
            throw APIError(.unauthorized, "this read needs Authorization: Herald <base64url FeedAccess envelope>")
        }
        let envelope: RawEnvelope
        do {
            envelope = try RawEnvelope.parse(authorizationHeader: header)
        } catch {
            throw APIError(.unauthorized, "the Authorization header does not hold a readable envelope")
        }
        switch state.verifier.verify(envelope, as: FeedAccess.self, now: state.clock()) {
        case .invalid(let rejection):
            state.metrics.recordRejection(rejection.code)
            throw APIError(rejection)
        case .valid(let verified):
            try await StoreCall.run(context) {
                try await state.store.rememberPublicKey(verified.publicKey, of: verified.signer, now: state.clock())
            }
            return verified
        }
    }
}
