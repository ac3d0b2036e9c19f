import HTTPTypes
import HeraldCore
import HeraldRelay
import HeraldStore
import Hummingbird
import NIOCore

/// The upstream relay's routes (PROTOCOL §7): `POST /v1/relay/token` (OAuth2 client credentials),
/// `POST /v1/relay/pushes` and `GET /v1/relay/usage`. Any Herald answers them; without installations
/// every client is refused.
enum RelayRoutes {
    /// Token requests are a few hundred bytes; anything much larger is not one.
    static let tokenBodyLimit = 4096
    /// A hundred pushes of up to 4 KiB each, with room for their envelopes.
    static let pushesBodyLimit = 1 << 20

    static func register(
        on router: Router<HeraldRequestContext>, state: ServerState, providers: PushProviders,
        authority: RelayAuthority
    ) {
        let limiter = RelayRateLimiter()
        router.on(RouteTable.relayToken) { request, context in
            try await token(request, context: context, state: state, authority: authority)
        }
        router.on(RouteTable.relayPushes) { request, context in
            guard
                let installation = try await StoreCall.run(
                    context, { try await authority.authorize(request.headers[.authorization]) })
            else { throw APIError(.unauthorized, "a valid Bearer access token from /v1/relay/token is required") }
            let body = try await RequestBody.readJSON(request, limit: pushesBodyLimit)
            let pushes = try RelayPush.parse(body.readableBytesView, mode: state.configuration.pushContent)
            let results = try await send(
                pushes, for: installation, state: state, providers: providers, limiter: limiter, context: context)
            return JSONResponse.make(.object([("results", .array(results.map(\.json)))]))
        }
        router.on(RouteTable.relayUsage) { request, context in
            guard
                let installation = try await StoreCall.run(
                    context,
                    {
                        try await authority.authorize(
                            request.headers[.authorization])
                    })
            else { throw APIError(.unauthorized, "a valid Bearer access token from /v1/relay/token is required") }
            let usage = try await StoreCall.run(context) {
                try await state.store.relayUsage(installation: installation.id)
            }
            return JSONResponse.make(
                .object([
                    ("installation", .string(installation.id)), ("name", .string(installation.name)),
                    ("sent", .number(String(usage.sent))), ("dead", .number(String(usage.dead))),
                    ("retry", .number(String(usage.retry))), ("failed", .number(String(usage.failed))),
                ]))
        }
    }

    /// Sends each push now, concurrently, under this server's own rules; answers in request order. Pushes
    /// past the installation's rate answer `retry`; when not one fits, the whole request is a 429.
    static func send(
        _ pushes: [RelayPush], for installation: RelayInstallation, state: ServerState, providers: PushProviders,
        limiter: RelayRateLimiter, context: HeraldRequestContext
    ) async throws -> [RelayPushResult] {
        let now = state.clock()
        let live = pushes.indices.filter { pushes[$0].isLive(at: now) }
        let (granted, retryAfter) = limiter.take(
            live.count, installation: installation.id, rate: installation.rate,
            nowMilliseconds: state.millisecondClock())
        if granted == 0 && !live.isEmpty {
            state.metrics.recordRelayPushes(installation: installation.id, status: "retry", count: live.count)
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
            state.metrics.recordRelayPushes(installation: installation.id, status: status, count: count)
        }
        // The pushes are out; a failure to count them must not turn their answer into an error.
        do {
            try await state.store.countRelayOutcomes(installation: installation.id, usage)
        } catch {
            context.logger.error("relay: cannot count outcomes: \(error)")
        }
        context.logger.debug(
            "relay pushes", metadata: ["installation": "\(installation.id)", "pushes": "\(pushes.count)"])
        return results
    }

    /// RFC 6749 §4.4 and §5: checks, in order, the Content-Type (415), the form, `grant_type`, the
    /// client, and `scope` (`api.push` when left out).
    static func token(
        _ request: Request, context: HeraldRequestContext, state: ServerState, authority: RelayAuthority
    ) async throws -> Response {
        guard isForm(request.headers[.contentType]) else {
            throw APIError(.unsupportedMediaType, "Content-Type must be application/x-www-form-urlencoded")
        }
        let body = try await RequestBody.collect(request, limit: tokenBodyLimit)
        guard let form = OAuthForm(body.readableBytesView) else {
            return oauthError("invalid_request", status: .badRequest)
        }
        guard let grant = form["grant_type"] else { return oauthError("invalid_request", status: .badRequest) }
        guard grant == "client_credentials" else { return oauthError("unsupported_grant_type", status: .badRequest) }
        guard let clientID = form["client_id"], let secret = form["client_secret"] else {
            return oauthError("invalid_request", status: .badRequest)
        }
        let prefix = "installation."
        let id = clientID.hasPrefix(prefix) ? String(clientID.dropFirst(prefix.count)) : ""
        guard RelayCredentials.isInstallationID(id),
            let installation = try await StoreCall.run(context, { try await state.store.installation(id: id) }),
            RelayCredentials.matches(key: secret, of: installation)
        else {
            context.logger.notice("relay token refused: unknown installation or wrong key")
            return oauthError("invalid_client", status: .unauthorized)
        }
        let scope = form["scope"] ?? RelayAccessToken.scope
        guard scope == RelayAccessToken.scope else { return oauthError("invalid_scope", status: .badRequest) }
        let tokens = try await StoreCall.run(context) { try await authority.tokens() }
        let token = tokens.issue(installation: installation.id, now: state.clock())
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
