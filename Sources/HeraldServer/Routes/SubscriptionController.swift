import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `GET /v1/channels/{channel}`, `POST /v1/subscriptions`, `GET /v1/users/{wallet}/subscriptions`.
struct SubscriptionController: Sendable {
    let signed: SignedRequests
    let store: any ChannelStore & SubscriberControlStore & DelegateStore
    let feedAccess: FeedAccessCheck
    let bodyLimit: Int

    init(state: ServerState, feedAccess: FeedAccessCheck) {
        signed = state.signedRequests
        store = state.store
        self.feedAccess = feedAccess
        bodyLimit = state.configuration.http.bodyLimit
    }

    var routes: RouteCollection<HeraldRequestContext> {
        let routes = RouteCollection(context: HeraldRequestContext.self)
        routes.on(RouteTable.channel) { _, context in try await channel(context: context) }
        routes.on(RouteTable.subscriptions) { request, context in try await post(request, context: context) }
        routes.on(RouteTable.userSubscriptions) { request, context in
            try await subscriptions(request, context: context)
        }
        return routes
    }

    private func channel(context: HeraldRequestContext) async throws -> Response {
        let address = try PathParameter.wallet(context, "channel")
        guard let channel = try await StoreCall.run(context, { try await store.channel(address) }) else {
            throw APIError(.notFound, "no channel \(address)")
        }
        let subscribers = try await StoreCall.run(context) { try await store.subscriberCount(of: address) }
        let settings = try await StoreCall.run(context) { try await store.channelSettings(of: address) } ?? .empty
        let delegates = try await StoreCall.run(context) { try await store.delegates(of: address) }
        return JSONResponse.make(
            .object([
                ("channel", .string(channel.address.checksummed)), ("name", .string(channel.name)),
                ("icon", .string(channel.icon)), ("url", .string(channel.url)),
                ("subscribers", .number(String(subscribers))), ("settings", settings.json),
                ("delegates", .array(delegates.map { .string($0.checksummed) })),
            ]))
    }

    private func post(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let body = try await RequestBody.readJSON(request, limit: bodyLimit)
        let now = signed.clock()
        let verified = try signed.verified(body.readableBytesView, as: Subscription.self, now: now)
        let operation = verified.operation
        let change = SubscriptionChange(
            action: operation.action == .subscribe ? .subscribe : .unsubscribe, channel: operation.channel,
            subscriber: operation.subscriber, publicKey: verified.publicKey, nonce: operation.nonceValue,
            operation: try signed.identity(of: verified),
            nonceRetainedUntil: signed.nonceRetention(expiresAt: operation.expiresAt),
            now: now)
        let outcome = try await StoreCall.run(context) { try await store.apply(change) }
        if case .repeated(let first) = outcome { return signed.replay(try answer(first, operation)) }
        return try answer(outcome, operation)
    }

    /// The answer of an outcome, or its refusal.
    private func answer(_ outcome: SubscriptionChangeOutcome, _ operation: Subscription) throws -> Response {
        let status: String
        switch outcome {
        case .subscribed: status = "subscribed"
        case .unsubscribed: status = "unsubscribed"
        case .unknownChannel: throw APIError(.notFound, "no channel \(operation.channel)")
        case .replayed:
            signed.metrics.recordRejection(.replayed)
            throw APIError(.replayed, "this nonce was already used by \(operation.subscriber)")
        case .repeated: throw APIError(.internal, "a subscription's kept answer is itself a replay")
        }
        return JSONResponse.make(
            .object([
                ("channel", .string(operation.channel.checksummed)),
                ("subscriber", .string(operation.subscriber.checksummed)),
                ("status", .string(status)),
            ]))
    }

    private func subscriptions(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let wallet = try PathParameter.wallet(context, "wallet")
        _ = try await feedAccess.authorize(request, wallet: wallet, context: context)
        let records = try await StoreCall.run(context) { try await store.subscriptions(of: wallet) }
        let now = signed.clock()
        let items = records.map { record in
            JSONValue.object([
                ("channel", .string(record.channel.checksummed)), ("name", .string(record.name)),
                ("since", .number(String(record.since))), ("unread", .number(String(record.unread))),
                ("settings", SubscriberControlController.json(record.settings)),
                ("mutedUntil", .number(String(record.mutedUntil(at: now)))),
            ])
        }
        return JSONResponse.make(.object([("subscriptions", .array(items))]))
    }
}
