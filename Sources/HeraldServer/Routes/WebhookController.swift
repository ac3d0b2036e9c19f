import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// docs/protocol.md §11.3: `POST /v1/webhooks`. The envelope is verified (steps 1–3; the URL's form and the
/// events in step 1), the URL's networks are judged with `webhooks.allowNetworks`, then the store applies it
/// with the channel's nonce; an unknown channel spends nothing.
struct WebhookController: Sendable {
    let signed: SignedRequests
    let store: any WebhookStore
    let bodyLimit: Int
    let policy: WebPushNetworkPolicy

    init(state: ServerState) {
        signed = state.signedRequests
        store = state.store
        bodyLimit = state.configuration.http.bodyLimit
        policy = state.configuration.webhooks.networkPolicy
    }

    var routes: RouteCollection<HeraldRequestContext> {
        let routes = RouteCollection(context: HeraldRequestContext.self)
        routes.on(RouteTable.webhooks) { request, context in try await post(request, context) }
        return routes
    }

    private func post(_ request: Request, _ context: HeraldRequestContext) async throws -> Response {
        let body = try await RequestBody.readJSON(request, limit: bodyLimit)
        let now = signed.clock()
        let verified = try signed.verified(body.readableBytesView, as: WebhookUpdate.self, now: now)
        let operation = verified.operation
        do { _ = try operation.target(policy: policy) } catch {
            signed.metrics.recordRejection(error.code)
            throw APIError(error)
        }
        let change = WebhookChange(
            channel: operation.channel, url: operation.url, events: operation.eventSet,
            signed: SignedChange(
                publicKey: verified.publicKey, nonce: operation.nonceValue,
                operation: try signed.identity(of: verified),
                nonceRetainedUntil: signed.nonceRetention(expiresAt: operation.expiresAt), now: now))
        let outcome = try await StoreCall.run(context, { try await store.apply(change) })
        if case .repeated(let first) = outcome { return signed.replay(try answer(first, operation)) }
        if case .applied(let status) = outcome {
            context.logger.info(
                "webhook \(status.rawValue)",
                metadata: [
                    "channel": "\(operation.channel)",
                    "origin": "\(WebPushEndpoint(operation.url, allowingHTTP: true)?.origin ?? "-")",
                    "events": "\(operation.eventSet.text)",
                ])
        }
        return try answer(outcome, operation)
    }

    /// The answer of an outcome, or its refusal. The URL's path is the receiver's and may carry a secret:
    /// the answer echoes it to the channel that signed it, logs say only its origin.
    private func answer(_ outcome: WebhookOutcome, _ operation: WebhookUpdate) throws -> Response {
        switch outcome {
        case .unknownChannel:
            signed.metrics.recordRejection(.forbidden)
            throw APIError(.forbidden, "\(operation.channel) is not a channel on this server")
        case .replayed:
            signed.metrics.recordRejection(.replayed)
            throw APIError(.replayed, "this nonce was already used by \(operation.channel)")
        case .repeated: throw APIError(.internal, "a Webhook's kept answer is itself a replay")
        case .applied(let status):
            return JSONResponse.make(
                .object([
                    ("channel", .string(operation.channel.checksummed)), ("url", .string(operation.url)),
                    ("events", .array(operation.eventSet.kinds.map { .string($0.rawValue) })),
                    ("status", .string(status.rawValue)),
                ]))
        }
    }
}
