import HeraldCore
import HeraldStore
import Hummingbird

/// `POST /v1/webpush` (PROTOCOL §9): a WebPushBinding registers or unregisters a subscription. The
/// binding is a device binding of platform `webpush` whose token is the endpoint, with the
/// subscription's keys: the same limit, expiry, refresh and setup confirmation as a device token's.
enum WebPushRoutes {
    static func register(on router: Router<HeraldRequestContext>, state: ServerState) {
        router.on(RouteTable.webpush) { request, context in
            try await postWebPush(request, context: context, state: state)
        }
    }

    static func postWebPush(
        _ request: Request, context: HeraldRequestContext, state: ServerState
    ) async throws -> Response {
        let body = try await RequestBody.readJSON(request, limit: state.configuration.bodyLimit)
        let now = state.clock()
        let verified = try state.verified(body.readableBytesView, as: WebPushBinding.self, now: now)
        let binding = verified.operation
        // The form was checked when the message was read; an IP-literal host is judged here, with the
        // networks the operator allows (§9).
        let subscription: WebPushSubscription
        do {
            subscription = try binding.subscription(
                policy: WebPushNetworkPolicy(allowed: state.configuration.webpush.allowNetworks))
        } catch {
            state.metrics.recordRejection(error.code)
            throw APIError(error)
        }
        let register = binding.action == .register
        let change = DeviceChange(
            action: register ? .register : .unregister, wallet: binding.wallet, platform: .webpush,
            deviceToken: subscription.endpoint, publicKey: verified.publicKey, nonce: binding.nonceValue,
            nonceRetainedUntil: state.nonceRetention(expiresAt: binding.expiresAt),
            now: now, maxBindingsPerWallet: state.configuration.maxBindingsPerWallet,
            queueSetupConfirmation: state.configuration.setupConfirmation, webPush: register ? subscription : nil)
        let status = try await DeviceRoutes.apply(change, state: state, logger: context.logger)
        context.logger.debug(
            "web push subscription \(status)",
            metadata: [
                "wallet": "\(binding.wallet)", "endpoint": "\(WebPushEndpoint.logOrigin(subscription.endpoint))",
            ])
        // The keys are not echoed (§9).
        return JSONResponse.make(
            .object([
                ("wallet", .string(binding.wallet.checksummed)), ("platform", .string(Platform.webpush.rawValue)),
                ("endpoint", .string(subscription.endpoint)), ("status", .string(status)),
            ]))
    }
}
