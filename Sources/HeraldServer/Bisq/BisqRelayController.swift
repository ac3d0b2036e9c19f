import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// Bisq's notification relay (docs/protocol.md §8), on only with `bisq.relay`: a Bisq desktop can use this server
/// as its relay unchanged. Like Bisq's own relay it is open (no signature), so besides the per-IP limit
/// each device token gets 1 push/s, burst 20: nobody can flood one phone through it. (The buckets live in
/// each node's memory, so N nodes allow N times that; a flood still needs the per-IP limit passed on each.)
/// Messages are opaque and never logged; tokens only by prefix.
struct BisqRelayController {
    let state: ServerState
    let perToken = RateLimiter(rate: 1, burst: 20, capacity: 1 << 16)
    /// The per-token buckets run on the server's clock, not the wall's, so that a fixed clock (tests)
    /// makes the limit exact whatever the machine's speed.
    let origin: (instant: ContinuousClock.Instant, seconds: Int64)
    /// The POST routes answer after the push's first attempt, or after this long.
    var firstAttemptWait = Duration.seconds(10)
    /// How often a waiter reads the outbox row without being woken: the push may be sent by another
    /// node, whose outbox service cannot wake this one.
    var fallbackReadInterval = Duration.seconds(1)

    init(
        state: ServerState, firstAttemptWait: Duration = .seconds(10), fallbackReadInterval: Duration = .seconds(1)
    ) {
        self.state = state
        self.firstAttemptWait = firstAttemptWait
        self.fallbackReadInterval = fallbackReadInterval
        origin = (ContinuousClock.now, state.clock())
    }

    /// Now, on the server's clock, as the limiter's instant.
    private var limiterNow: ContinuousClock.Instant { origin.instant + .seconds(state.clock() - origin.seconds) }

    var routes: RouteCollection<HeraldRequestContext> {
        let routes = RouteCollection(context: HeraldRequestContext.self)
        routes.on(RouteTable.bisqRelay) { request, context in await legacyRelay(request, context: context) }
        routes.on(RouteTable.bisqAPNs) { request, context in
            try await devicePush(request, context: context, platform: .ios)
        }
        routes.on(RouteTable.bisqFCM) { request, context in
            try await devicePush(request, context: context, platform: .android)
        }
        return routes
    }

    /// `GET /relay`: `success` once the push is durably queued; every fault one `text/plain` line.
    func legacyRelay(_ request: Request, context: HeraldRequestContext) async -> Response {
        let relay: BisqRelayRequest
        do {
            relay = try BisqRelayRequest(legacyQuery: request.uri.queryParameters)
        } catch {
            return BisqPlainText.response(error.line, status: .badRequest)
        }
        if let wait = perToken.acquire(RateLimitKey(hashing: Array(relay.deviceToken.utf8)), now: limiterNow) {
            return BisqPlainText.tooManyRequests("too many pushes to this device token", retryAfter: wait)
        }
        do {
            _ = try await queue(relay, context: context)
        } catch {
            let refusal = StoreCall.refusal(error, logger: context.logger)
            return BisqPlainText.response(refusal.message, status: refusal.status, retryAfter: refusal.retryAfter)
        }
        return BisqPlainText.response("success")
    }

    /// `POST /v1/apns|fcm/device/{token}`: queues the push, then answers with how its first attempt went.
    func devicePush(
        _ request: Request, context: HeraldRequestContext, platform: Platform
    ) async throws -> Response {
        let body = try await RequestBody.readJSON(request, limit: state.configuration.http.bodyLimit)
        let relay = try BisqRelayRequest(
            platform: platform, token: context.parameters.get("token") ?? "", body: body.readableBytesView)
        if let wait = perToken.acquire(RateLimitKey(hashing: Array(relay.deviceToken.utf8)), now: limiterNow) {
            throw APIError(.rateLimited, "too many pushes to this device token; retry later", retryAfter: wait)
        }
        let id = try await StoreCall.run(context) { try await queue(relay, context: context) }
        let outcome = await firstAttempt(of: id)
        var members: [(key: String, value: JSONValue)] = [("isUnregistered", .bool(outcome.isUnregistered))]
        if let message = outcome.errorMessage { members.append(("errorMessage", .string(message))) }
        return JSONResponse.make(.object(members))
    }

    private func queue(_ relay: BisqRelayRequest, context: HeraldRequestContext) async throws -> Int64 {
        let id = try await state.store.queueBisqPush(
            BisqRelayPush(
                platform: relay.platform, deviceToken: relay.deviceToken, content: relay.content, now: state.clock()))
        state.pushWakeup.signal([relay.platform])
        context.logger.debug(
            "bisq push queued",
            metadata: [
                "push": "\(id)", "platform": "\(relay.platform.rawValue)",
                "token": "\(DeviceToken.logPrefix(relay.deviceToken))",
            ])
        return id
    }

    /// The POST routes' answer (§8): sent, dead token, failed for good, queued for retry, or not yet tried.
    struct FirstAttempt: Equatable {
        let isUnregistered: Bool
        let errorMessage: String?
    }

    /// Waits for the push's first recorded attempt: woken when this node's outbox service records it,
    /// and reading the row once a second in case another node's worker sent it.
    func firstAttempt(of id: Int64) async -> FirstAttempt {
        let deadline = ContinuousClock.now + firstAttemptWait
        var lastError = "not attempted yet; it goes as soon as a worker takes it"
        // Entered before the first read: an outcome recorded after that read still wakes the wait.
        let ticket = state.pushOutcomes.enter(id)
        defer { state.pushOutcomes.leave(ticket) }
        while true {
            if let pushState = try? await state.store.pushState(id: id) {
                let reason = pushState.lastError ?? ""
                switch pushState.status {
                case "sent": return FirstAttempt(isUnregistered: false, errorMessage: nil)
                case "pruned": return FirstAttempt(isUnregistered: true, errorMessage: reason)
                case "failed": return FirstAttempt(isUnregistered: false, errorMessage: "failed: \(reason)")
                default:
                    if pushState.attempts > 0 {
                        return FirstAttempt(isUnregistered: false, errorMessage: "queued for retry: \(reason)")
                    }
                }
            } else {
                lastError = "its state cannot be read now"
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero, !Task.isCancelled else {
                return FirstAttempt(isUnregistered: false, errorMessage: "queued: \(lastError)")
            }
            await ticket.wait(upTo: min(left, fallbackReadInterval))
        }
    }
}
