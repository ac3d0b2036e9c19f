import HTTPTypes
import HeraldCore
import HeraldRelay
import HeraldStore
import Hummingbird
import NIOCore

/// The upstream relay's routes (docs/protocol.md §7): `POST /v1/relay/token` (OAuth2 client credentials),
/// `POST /v1/relay/pushes` and `GET /v1/relay/usage`. Any Herald answers them; without installations
/// every client is refused.
struct RelayController: Sendable {
    /// Token requests are a few hundred bytes; anything much larger is not one.
    static let tokenBodyLimit = 4096
    /// A hundred pushes of up to 4 KiB each, with room for their envelopes.
    static let pushesBodyLimit = 1 << 20

    let store: any RelayStore
    let providers: PushProviders
    let authority: RelayAuthority
    let metrics: ServerMetrics
    let pushContent: PushContent.Mode
    /// Unix seconds, and milliseconds for the installations' rate.
    let clock: @Sendable () -> Int64
    let millisecondClock: @Sendable () -> Int64
    let limiter = RelayRateLimiter()

    init(state: ServerState, providers: PushProviders) {
        store = state.store
        self.providers = providers
        authority = RelayAuthority(store: state.store, clock: state.clock)
        metrics = state.metrics
        pushContent = state.configuration.push.content
        clock = state.clock
        millisecondClock = state.millisecondClock
    }

    var routes: RouteCollection<HeraldRequestContext> {
        let routes = RouteCollection(context: HeraldRequestContext.self)
        routes.on(RouteTable.relayToken) { request, context in try await token(request, context: context) }
        routes.on(RouteTable.relayPushes) { request, context in
            let installation = try await authorize(request, context: context)
            let body = try await RequestBody.readJSON(request, limit: Self.pushesBodyLimit)
            let pushes = try RelayPush.parse(body.readableBytesView, mode: pushContent)
            let results = try await send(pushes, for: installation, context: context)
            return JSONResponse.make(.object([("results", .array(results.map(\.json)))]))
        }
        routes.on(RouteTable.relayUsage) { request, context in
            let installation = try await authorize(request, context: context)
            let usage = try await StoreCall.run(context) { try await store.relayUsage(installation: installation.id) }
            return JSONResponse.make(
                .object([
                    ("installation", .string(installation.id)), ("name", .string(installation.name)),
                    ("sent", .number(String(usage.sent))), ("dead", .number(String(usage.dead))),
                    ("retry", .number(String(usage.retry))), ("failed", .number(String(usage.failed))),
                ]))
        }
        return routes
    }

    /// The installation a Bearer access token from `/v1/relay/token` names, else `401`.
    private func authorize(_ request: Request, context: HeraldRequestContext) async throws -> RelayInstallation {
        guard
            let installation = try await StoreCall.run(
                context, { try await authority.authorize(request.headers[.authorization]) })
        else { throw APIError(.unauthorized, "a valid Bearer access token from /v1/relay/token is required") }
        return installation
    }

    /// Sends each push now, concurrently, under this server's own rules; answers in request order. Pushes
    /// past the installation's rate answer `retry`; when not one fits, the whole request is a 429.
    func send(
        _ pushes: [RelayPush], for installation: RelayInstallation, context: HeraldRequestContext
    ) async throws -> [RelayPushResult] {
        let now = clock()
        let live = pushes.indices.filter { pushes[$0].isLive(at: now) }
        let (granted, retryAfter) = limiter.take(
            live.count, installation: installation.id, rate: installation.rate,
            nowMilliseconds: millisecondClock())
        if granted == 0 && !live.isEmpty {
            metrics.recordRelayPushes(installation: installation.id, status: "retry", count: live.count)
            throw APIError(
                .rateLimited, "installation over its rate of \(installation.rate) pushes/s", retryAfter: retryAfter)
        }
        let sending = Array(live.prefix(granted))
        var results = pushes.map { push in
            push.isLive(at: now)
                ? RelayPushResult(
                    id: push.id, status: .retry, reason: "installation over its rate", retryAfter: retryAfter)
                : RelayPushResult(id: push.id, status: .failed, reason: "expired")
        }
        await withTaskGroup(of: (Int, RelayPushResult).self) { group in
            for index in sending {
                let push = pushes[index]
                group.addTask {
                    let delivery = await providers.provider(for: push.message.platform).deliver(push.message)
                    return (index, RelayPushResult(id: push.id, delivery))
                }
            }
            for await (index, result) in group { results[index] = result }
        }
        var usage = RelayUsage()
        for result in results {
            switch result.status {
            case .sent: usage.sent += 1
            case .dead: usage.dead += 1
            case .retry: usage.retry += 1
            case .failed: usage.failed += 1
            }
        }
        for (status, count) in [
            ("sent", usage.sent), ("dead", usage.dead), ("retry", usage.retry), ("failed", usage.failed),
        ] {
            metrics.recordRelayPushes(installation: installation.id, status: status, count: count)
        }
        // The pushes are out; a failure to count them must not turn their answer into an error.
        do {
            try await store.countRelayOutcomes(installation: installation.id, usage)
        } catch {
            context.logger.error("relay: cannot count outcomes: \(error)")
        }
        context.logger.debug(
            "relay pushes", metadata: ["installation": "\(installation.id)", "pushes": "\(pushes.count)"])
        return results
    }

    /// RFC 6749 §4.4 and §5: checks, in order, the Content-Type (415), the form, `grant_type`, the
    /// client, and `scope` (`api.push` when left out).
    func token(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard Self.isForm(request.headers[.contentType]) else {
            throw APIError(.unsupportedMediaType, "Content-Type must be application/x-www-form-urlencoded")
        }
        let body = try await RequestBody.collect(request, limit: Self.tokenBodyLimit)
        guard let form = OAuthForm(body.readableBytesView) else {
            return Self.oauthError("invalid_request", status: .badRequest)
        }
        guard let grant = form["grant_type"] else { return Self.oauthError("invalid_request", status: .badRequest) }
        guard grant == "client_credentials" else {
            return Self.oauthError("unsupported_grant_type", status: .badRequest)
        }
        guard let clientID = form["client_id"], let secret = form["client_secret"] else {
            return Self.oauthError("invalid_request", status: .badRequest)
        }
        let prefix = "installation."
        let id = clientID.hasPrefix(prefix) ? String(clientID.dropFirst(prefix.count)) : ""
        guard RelayCredentials.isInstallationID(id),
            let installation = try await StoreCall.run(context, { try await store.installation(id: id) }),
            RelayCredentials.matches(key: secret, of: installation)
        else {
            context.logger.notice("relay token refused: unknown installation or wrong key")
            return Self.oauthError("invalid_client", status: .unauthorized)
        }
        let scope = form["scope"] ?? RelayAccessToken.scope
        guard scope == RelayAccessToken.scope else { return Self.oauthError("invalid_scope", status: .badRequest) }
        let tokens = try await StoreCall.run(context) { try await authority.tokens() }
        let token = tokens.issue(installation: installation.id, now: clock())
        context.logger.debug("relay token issued", metadata: ["installation": "\(installation.id)"])
        var response = JSONResponse.make(
            .object([
                ("access_token", .string(token)), ("token_type", .string("Bearer")),
                ("expires_in", .number(String(RelayAccessToken.lifetime))),
                ("scope", .string(RelayAccessToken.scope)),
            ]))
        // RFC 6749 §5.1: a response holding a token is never cached.
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// RFC 6749 §5.2's error body.
    static func oauthError(_ error: String, status: HTTPResponse.Status) -> Response {
        var response = JSONResponse.make(.object([("error", .string(error))]), status: status)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    static func isForm(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = contentType.split(separator: ";").first.map { String($0).trimmed.lowercased() }
        return type == "application/x-www-form-urlencoded"
    }
}
