import HeraldCore

/// A self-hosted server allowed to push through this upstream relay (docs/protocol.md §7). Only SHA-256 of its
/// key is kept: the key itself is shown once, when the operator adds the installation.
public struct RelayInstallation: Sendable, Hashable {
    /// A UUID, lowercase.
    public let id: String
    public let name: String
    /// SHA-256 of the key's base64url text.
    public let keyHash: [UInt8]
    /// Pushes per second (token bucket, burst 10×).
    public let rate: Int
    public let createdAt: Int64

    public init(id: String, name: String, keyHash: [UInt8], rate: Int, createdAt: Int64) {
        self.id = id
        self.name = name
        self.keyHash = keyHash
        self.rate = rate
        self.createdAt = createdAt
    }
}

/// Outcomes of an installation's pushes, counted (never the pushes themselves).
public struct RelayUsage: Sendable, Hashable {
    public var sent: Int
    public var dead: Int
    public var retry: Int
    public var failed: Int

    public init(sent: Int = 0, dead: Int = 0, retry: Int = 0, failed: Int = 0) {
        self.sent = sent
        self.dead = dead
        self.retry = retry
        self.failed = failed
    }

    public var isEmpty: Bool { sent == 0 && dead == 0 && retry == 0 && failed == 0 }
}

/// What the upstream relay keeps: installations, the secret its access tokens are signed with, and
/// counts of outcomes. No payload and no device token is ever written here.
public protocol RelayStore: Sendable {
    /// Adds an installation; a second one with the same id is refused with `StoreError`.
    func addInstallation(_ installation: RelayInstallation) async throws

    /// Removes an installation and its counts; false when there was none.
    func removeInstallation(id: String) async throws -> Bool

    /// Every installation, oldest first.
    func installations() async throws -> [RelayInstallation]

    func installation(id: String) async throws -> RelayInstallation?

    /// The secret access tokens are signed with. The first node to ask stores `candidate`; every later
    /// call, on any node, gets the stored one, so that every node of one upstream checks every token.
    func relayTokenSecret(candidate: [UInt8]) async throws -> [UInt8]

    /// Adds to an installation's counts (nothing for an installation removed meanwhile).
    func countRelayOutcomes(installation: String, _ usage: RelayUsage) async throws

    /// An installation's counts so far.
    func relayUsage(installation: String) async throws -> RelayUsage
}
