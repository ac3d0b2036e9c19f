import Foundation
import HeraldCore
import Synchronization

/// The downstream's access token for its upstream relay (docs/protocol.md §7): fetched with the installation's
/// id and key (OAuth2 client credentials), cached until 60 s before it expires, dropped after a 401.
final class UpstreamTokens: Sendable {
    /// Why the upstream refused to issue a token: its status and RFC 6749 error, never the key.
    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    private let transport: any PushHTTPTransport
    private let url: String
    private let form: [UInt8]
    private let cached = Mutex<(token: String, renewAt: Date)?>(nil)
    /// The fetch under way, which every caller arriving meanwhile shares: one request, not one each.
    private let pending = Mutex<Task<String, any Error>?>(nil)

    init(transport: any PushHTTPTransport, upstream: String, installationID: String, key: String) {
        self.transport = transport
        url = upstream + "/v1/relay/token"
        form = Array(
            ("grant_type=client_credentials&client_id=installation.\(Self.encoded(installationID))"
                + "&client_secret=\(Self.encoded(key))&scope=api.push").utf8)
    }

    func token() async throws -> String {
        if let cached = cached.withLock({ $0 }), Date() < cached.renewAt { return cached.token }
        return try await sharedFetch().value
    }

    /// The fetch under way, or a new one. It is made and stored under the lock, and clears itself under
    /// it when done, so it cannot clear its slot before it is stored there.
    private func sharedFetch() -> Task<String, any Error> {
        pending.withLock { pending -> Task<String, any Error> in
            if let pending { return pending }
            let fetch = Task {
                defer { self.pending.withLock { $0 = nil } }
                return try await self.fetch()
            }
            pending = fetch
            return fetch
        }
    }

    /// One request for a token, whose answer is cached; only ``sharedFetch()`` starts it.
    private func fetch() async throws -> String {
        let response = try await transport.send(
            PushHTTPRequest(
                url: url, headers: [("content-type", "application/x-www-form-urlencoded")], body: form))
        let json = try? JSONParser.parse(response.body)
        guard response.status == 200, case .string(let token)? = json?["access_token"] else {
            let error = json?["error"]?.stringValue ?? json?["error"]?["code"]?.stringValue ?? "no error given"
            throw Refused(description: "upstream token request refused: \(response.status) \(error)")
        }
        let lifetime = AccessTokenLifetime.seconds(expiresIn: json?["expires_in"])
        cached.withLock { $0 = (token, Date().addingTimeInterval(Double(max(0, lifetime - 60)))) }
        return token
    }

    /// Forgets `token` after the upstream refused it, so that the next call fetches another.
    func invalidate(_ token: String) {
        cached.withLock { if $0?.token == token { $0 = nil } }
    }

    /// Form encoding of a value: everything but unreserved characters percent-encoded.
    static func encoded(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}
