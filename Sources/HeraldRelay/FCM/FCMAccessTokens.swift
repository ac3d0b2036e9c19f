public import Foundation
import HeraldCore

/// OAuth2 access tokens for FCM: fetched with a signed assertion from the service account's
/// `token_uri` (or an override), cached until a minute before they expire, dropped on a 401.
public actor FCMAccessTokens {
    let account: ServiceAccount
    let tokenURI: String
    let transport: any PushHTTPTransport
    let clock: @Sendable () -> Int64
    private var current: (token: String, expiresAt: Int64)?
    /// The fetch under way, which every caller arriving meanwhile shares: one request, not one each.
    private var pending: Task<String, any Error>?
    /// Tokens fetched so far (for tests).
    public private(set) var fetched = 0

    public init(
        account: ServiceAccount, tokenURI: String? = nil, transport: any PushHTTPTransport,
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) {
        self.account = account
        self.tokenURI = tokenURI ?? account.tokenURI
        self.transport = transport
        self.clock = clock
    }

    public func token() async throws -> String {
        let now = clock()
        if let current, now < current.expiresAt - 60 { return current.token }
        if let pending { return try await pending.value }
        let fetch = Task { try await self.fetch(now: now) }
        pending = fetch
        defer { pending = nil }
        return try await fetch.value
    }

    /// One request to the token endpoint, whose answer is cached; only ``token()`` starts it.
    private func fetch(now: Int64) async throws -> String {
        let assertion = try account.assertion(audience: tokenURI, now: now)
        let form =
            "grant_type=" + Self.formEncode("urn:ietf:params:oauth:grant-type:jwt-bearer") + "&assertion="
            + Self.formEncode(assertion)
        let response = try await transport.send(
            PushHTTPRequest(
                url: tokenURI, headers: [("content-type", "application/x-www-form-urlencoded")],
                body: Array(form.utf8)))
        guard response.status == 200, let json = try? JSONParser.parse(response.body),
            let token = json["access_token"]?.stringValue
        else {
            throw FCMTokenError(status: response.status)
        }
        current = (token, now.addingSaturated(AccessTokenLifetime.seconds(expiresIn: json["expires_in"])))
        fetched += 1
        return token
    }

    /// Forgets `token` after FCM refused it (401), so that the next send fetches another.
    public func invalidate(_ token: String) {
        if current?.token == token { current = nil }
    }

    static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

/// The token endpoint refused or failed; retried like any unavailable service.
struct FCMTokenError: Error, CustomStringConvertible {
    let status: Int
    var description: String { "the OAuth token endpoint answered \(status)" }
}
