import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// docs/protocol.md §11.1: `POST /v1/delegates`. The envelope is verified (steps 1–3; a delegate equal to
/// its channel is refused in step 1), then the store applies it with the channel's nonce; a refusal
/// (unknown channel, a 21st delegate) spends nothing.
struct DelegateController: Sendable {
    let signed: SignedRequests
    let store: any DelegateStore
    let bodyLimit: Int

    init(state: ServerState) {
        signed = state.signedRequests
        store = state.store
        bodyLimit = state.configuration.http.bodyLimit
    }

    var routes: RouteCollection<HeraldRequestContext> {
        let routes = RouteCollection(context: HeraldRequestContext.self)
        routes.on(RouteTable.delegates) { request, context in try await post(request, context) }
        return routes
    }

    private func post(_ request: Request, _ context: HeraldRequestContext) async throws -> Response {
        let body = try await RequestBody.readJSON(request, limit: bodyLimit)
        let now = signed.clock()
        let verified = try signed.verified(body.readableBytesView, as: DelegateUpdate.self, now: now)
        let operation = verified.operation
        let change = DelegateChange(
            channel: operation.channel, delegate: operation.delegate, action: operation.action,
            signed: SignedChange(
                publicKey: verified.publicKey, nonce: operation.nonceValue,
                operation: try signed.identity(of: verified),
                nonceRetainedUntil: signed.nonceRetention(expiresAt: operation.expiresAt), now: now))
        let outcome = try await StoreCall.run(context, { try await store.apply(change) })
        if case .repeated(let first) = outcome { return signed.replay(try answer(first, operation)) }
        if case .applied(let status) = outcome {
            context.logger.info(
                "delegate changed",
                metadata: [
                    "channel": "\(operation.channel)", "delegate": "\(operation.delegate)",
                    "status": "\(status.rawValue)",
                ])
        }
        return try answer(outcome, operation)
    }

    /// The answer of an outcome, or its refusal.
    private func answer(_ outcome: DelegateOutcome, _ operation: DelegateUpdate) throws -> Response {
        switch outcome {
        case .unknownChannel:
            signed.metrics.recordRejection(.forbidden)
            throw APIError(.forbidden, "\(operation.channel) is not a channel on this server")
        case .tooMany:
            signed.metrics.recordRejection(.forbidden)
            throw APIError(.forbidden, "\(operation.channel) has \(DelegatePlanner.limit) delegates already")
        case .replayed:
            signed.metrics.recordRejection(.replayed)
            throw APIError(.replayed, "this nonce was already used by \(operation.channel)")
        case .repeated: throw APIError(.internal, "a Delegate's kept answer is itself a replay")
        case .applied(let status):
            return JSONResponse.make(
                .object([
                    ("channel", .string(operation.channel.checksummed)),
                    ("delegate", .string(operation.delegate.checksummed)), ("status", .string(status.rawValue)),
                ]))
        }
    }
}
