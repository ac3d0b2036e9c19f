import HeraldCore
import HeraldStore
import Hummingbird

/// `POST /v1/webpush` (docs/protocol.md §9): a WebPushBinding registers or unregisters a subscription.
/// The binding is a device binding of platform `webpush` whose token is the endpoint, with the
/// subscription's keys: the same limit, expiry, refresh and setup confirmation as a device token's, so
/// it is applied through ``DeviceController``.
struct WebPushController: Sendable {
    let devices: DeviceController
    /// Networks endpoints may reach despite §9's refused ranges.
    let allowNetworks: [IPNetwork]

    init(state: ServerState, devices: DeviceController) {
        self.devices = devices
        allowNetworks = state.configuration.webpush.allowNetworks
    }

    var routes: RouteCollection<HeraldRequestContext> {
        let routes = RouteCollection(context: HeraldRequestContext.self)
        routes.on(RouteTable.webpush) { request, context in try await post(request, context: context) }
        return routes
    }

    private func post(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let signed = devices.signed
        let body = try await RequestBody.readJSON(request, limit: devices.bodyLimit)
        let now = signed.clock()
        let verified = try signed.verified(body.readableBytesView, as: WebPushBinding.self, now: now)
        let binding = verified.operation
        // The form was checked when the message was read; an IP-literal host is judged here, with the
        // networks the operator allows (§9).
        let subscription: WebPushSubscription
        do {
            subscription = try binding.subscription(policy: WebPushNetworkPolicy(allowed: allowNetworks))
        } catch {
            signed.metrics.recordRejection(error.code)
            throw APIError(error)
        }
        let register = binding.action == .register
        let change = DeviceChange(
            action: register ? .register : .unregister, wallet: binding.wallet, platform: .webpush,
            deviceToken: subscription.endpoint, publicKey: verified.publicKey, nonce: binding.nonceValue,
            operation: try signed.identity(of: verified),
            nonceRetainedUntil: signed.nonceRetention(expiresAt: binding.expiresAt),
            now: now, maxBindingsPerWallet: devices.maxBindingsPerWallet,
            queueSetupConfirmation: devices.setupConfirmation, webPush: register ? subscription : nil)
        let (status, isReplay) = try await devices.apply(change, logger: context.logger)
        context.logger.debug(
            "web push subscription \(status)",
            metadata: [
                "wallet": "\(binding.wallet)", "endpoint": "\(WebPushEndpoint.logOrigin(subscription.endpoint))",
            ])
        // The keys are not echoed (§9).
        let response = JSONResponse.make(
            .object([
                ("wallet", .string(binding.wallet.checksummed)), ("platform", .string(Platform.webpush.rawValue)),
                ("endpoint", .string(subscription.endpoint)), ("status", .string(status)),
            ]))
        return isReplay ? signed.replay(response) : response
    }
}
