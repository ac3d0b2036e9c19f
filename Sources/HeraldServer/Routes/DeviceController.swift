import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging
import NIOCore

/// `POST /v1/devices` (register / unregister) and `GET /v1/users/{wallet}/pubkey`. The POST is
/// usually answered by ``DeviceRouteFastPath`` below Hummingbird, with this controller's ``answer``.
struct DeviceController: Sendable {
    let signed: SignedRequests
    let store: any BindingStore
    let metrics: ServerMetrics
    let pushWakeup: PushWakeup
    let bodyLimit: Int
    let maxBindingsPerWallet: Int
    let setupConfirmation: Bool

    init(state: ServerState) {
        signed = state.signedRequests
        store = state.store
        metrics = state.metrics
        pushWakeup = state.pushWakeup
        bodyLimit = state.configuration.http.bodyLimit
        maxBindingsPerWallet = state.configuration.bindings.maxPerWallet
        setupConfirmation = state.configuration.push.setupConfirmation
    }

    var routes: RouteCollection<HeraldRequestContext> {
        let routes = RouteCollection(context: HeraldRequestContext.self)
        routes.on(RouteTable.devices) { request, context in
            let body = try await RequestBody.readJSON(request, limit: bodyLimit)
            let answer = try await answer(body.readableBytesView, logger: context.logger)
            let response = JSONResponse.make(answer.body)
            return answer.isReplay ? signed.replay(response) : response
        }
        routes.on(RouteTable.publicKey) { _, context in try await publicKey(context: context) }
        return routes
    }

    /// A verified, applied DeviceBinding's answer, and whether it is the first answer of the same operation
    /// given again (docs/protocol.md §11.2: the route adds `Idempotent-Replay: true`). Shared by the route
    /// above and by `DeviceRouteFastPath`, which answers the same request below Hummingbird.
    func answer(_ body: ByteBufferView, logger: Logger) async throws -> (body: JSONValue, isReplay: Bool) {
        let now = signed.clock()
        let verified = try signed.verified(body, as: DeviceBinding.self, now: now)
        let binding = verified.operation
        let change = DeviceChange(
            action: binding.action == .register ? .register : .unregister, wallet: binding.wallet,
            platform: binding.platform, deviceToken: binding.normalizedDeviceToken, publicKey: verified.publicKey,
            nonce: binding.nonceValue, operation: try signed.identity(of: verified),
            nonceRetainedUntil: signed.nonceRetention(expiresAt: binding.expiresAt),
            now: now, maxBindingsPerWallet: maxBindingsPerWallet,
            queueSetupConfirmation: setupConfirmation)
        let (status, isReplay) = try await apply(change, logger: logger)
        logger.debug(
            "device \(status)\(isReplay ? " (an answer given again)" : "")",
            metadata: [
                "wallet": "\(binding.wallet)", "platform": "\(binding.platform.rawValue)",
                "token": "\(DeviceToken.logPrefix(change.deviceToken))",
            ])
        let answer = JSONValue.object([
            ("wallet", .string(binding.wallet.checksummed)), ("platform", .string(binding.platform.rawValue)),
            ("deviceToken", .string(change.deviceToken)), ("status", .string(status)),
        ])
        return (answer, isReplay)
    }

    private func publicKey(context: HeraldRequestContext) async throws -> Response {
        let wallet = try PathParameter.wallet(context, "wallet")
        guard let key = try await StoreCall.run(context, { try await store.publicKey(of: wallet) }) else {
            throw APIError(.notFound, "no verified signature from \(wallet) yet")
        }
        return JSONResponse.make(.object([("wallet", .string(wallet.checksummed)), ("publicKey", .string(key.hex))]))
    }

    /// Applies a verified binding change (a device token's or a Web Push subscription's), counts it,
    /// wakes the push worker for a new binding's setup confirmation, and maps refusals to their §3
    /// errors. Returns the status the answer carries, and whether it is the first answer of the same
    /// operation, given again (nothing counted or woken then: nothing changed).
    func apply(_ change: DeviceChange, logger: Logger) async throws -> (status: String, isReplay: Bool) {
        let outcome = try await StoreCall.run(logger: logger, { try await store.apply(change) })
        if case .repeated(let first) = outcome { return (try Self.status(of: first), true) }
        switch outcome {
        case .registered(let created):
            metrics.recordDeviceChange(created ? "created" : "refreshed")
            if created && change.queueSetupConfirmation { pushWakeup.signal([change.platform]) }
        case .unregistered:
            metrics.recordDeviceChange("unregistered")
        case .absent:
            metrics.recordDeviceChange("absent")
        case .replayed:
            metrics.recordRejection(.replayed)
            throw APIError(.replayed, "this nonce was already used by \(change.wallet)")
        case .overLimit:
            metrics.recordRejection(.forbidden)
            throw APIError(.forbidden, "\(change.wallet) already has \(maxBindingsPerWallet) device bindings")
        case .repeated:
            break
        }
        return (try Self.status(of: outcome), false)
    }

    /// The answer's `status` of an applied change.
    private static func status(of outcome: DeviceChangeOutcome) throws -> String {
        switch outcome {
        case .registered: return "registered"
        case .unregistered: return "unregistered"
        case .absent: return "absent"
        case .replayed, .overLimit, .repeated:
            throw APIError(.internal, "a device change's answer is not an applied one")
        }
    }
}
