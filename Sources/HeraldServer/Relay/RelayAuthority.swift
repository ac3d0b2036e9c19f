import Crypto
import HeraldStore
import Synchronization

/// Who may use the relay routes on this upstream node: issues access tokens to installations that
/// prove their key, and checks them. The signing secret comes from the database once (every node of
/// the upstream shares it); the set of installations is re-read at most every `refreshSeconds`, so a
/// removed installation's tokens stop working on every node within that time (docs/protocol.md §7: 60 s).
final class RelayAuthority: Sendable {
    static let refreshSeconds: Int64 = 10

    private let store: any RelayStore
    private let clock: @Sendable () -> Int64
    private struct State {
        var tokens: RelayAccessToken?
        var installations: [String: RelayInstallation] = [:]
        var readAt: Int64?
    }
    private let state = Mutex(State())

    init(store: any RelayStore, clock: @escaping @Sendable () -> Int64) {
        self.store = store
        self.clock = clock
    }

    /// The token signer, from the secret stored by the first node to ask.
    func tokens() async throws -> RelayAccessToken {
        if let tokens = state.withLock({ $0.tokens }) { return tokens }
        let candidate = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let tokens = RelayAccessToken(secret: try await store.relayTokenSecret(candidate: candidate))
        state.withLock { $0.tokens = tokens }
        return tokens
    }

    /// The installation, if it exists (as of the last read, at most `refreshSeconds` old).
    func installation(_ id: String) async throws -> RelayInstallation? {
        let now = clock()
        let cached = state.withLock { state -> RelayInstallation?? in
            guard let readAt = state.readAt, now - readAt < Self.refreshSeconds, now >= readAt else { return nil }
            return .some(state.installations[id])
        }
        if let cached { return cached }
        let all = try await store.installations()
        let byID = Dictionary(all.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        state.withLock {
            $0.installations = byID
            $0.readAt = now
        }
        return byID[id]
    }

    /// The installation a request's `Authorization: Bearer …` token was issued to, when the token is
    /// valid and the installation still exists; nil otherwise.
    func authorize(_ authorization: String?) async throws -> RelayInstallation? {
        guard let authorization, authorization.count > 7,
            authorization.prefix(7).lowercased() == "bearer "
        else { return nil }
        let token = String(authorization.dropFirst(7)).trimmed
        guard let id = try await tokens().verify(token, now: clock()) else { return nil }
        return try await installation(id)
    }
}
