import HeraldStore
import Testing

/// The upstream relay's installations, token secret and counts: the `RelayStore` contract, on every
/// backend (both implement it as part of `HeraldStore`).
@Suite struct RelayConformanceTests {
    static func installation(
        _ id: String, name: String = "Self-hosted", rate: Int = 100, at: Int64 = 10
    )
        -> RelayInstallation
    {
        RelayInstallation(
            id: id, name: name, keyHash: Array(repeating: UInt8(id.count), count: 32), rate: rate, createdAt: at)
    }

    @Test(arguments: StoreBackend.available)
    func installationsAreAddedListedAndRemoved(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let first = Self.installation("0b7c2a9e-3a57-4a7e-9f0e-1c7f3c4e2a10", name: "Alpha", rate: 5, at: 10)
            let second = Self.installation("9d1f7c3a-8e2b-4c5d-a6f7-0e1d2c3b4a59", name: "Beta", at: 20)
            try await store.addInstallation(second)
            try await store.addInstallation(first)
            #expect(try await store.installations() == [first, second], "oldest first")
            #expect(try await store.installation(id: first.id) == first)
            // The same id twice is refused, and the first stays as it was.
            await #expect(throws: StoreError.self) {
                try await store.addInstallation(Self.installation(first.id, name: "Other"))
            }
            #expect(try await store.installation(id: first.id)?.name == "Alpha")

            #expect(try await store.removeInstallation(id: first.id))
            #expect(try await store.removeInstallation(id: first.id) == false)
            #expect(try await store.installation(id: first.id) == nil)
            #expect(try await store.installations() == [second])
        }
    }

    @Test(arguments: StoreBackend.available)
    func theTokenSecretIsTheFirstOneStored(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let first = [UInt8](repeating: 1, count: 32)
            let second = [UInt8](repeating: 2, count: 32)
            let stored = try await store.relayTokenSecret(candidate: first)
            let again = try await store.relayTokenSecret(candidate: second)
            #expect(stored == first)
            #expect(again == first, "the first secret stored stands")
        }
    }

    @Test(arguments: StoreBackend.available)
    func outcomesAreCountedPerInstallationAndGoWithIt(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let id = "0b7c2a9e-3a57-4a7e-9f0e-1c7f3c4e2a10"
            try await store.addInstallation(Self.installation(id))
            #expect(try await store.relayUsage(installation: id) == RelayUsage())
            try await store.countRelayOutcomes(installation: id, RelayUsage(sent: 3, dead: 1))
            try await store.countRelayOutcomes(installation: id, RelayUsage(sent: 2, retry: 4, failed: 1))
            #expect(try await store.relayUsage(installation: id) == RelayUsage(sent: 5, dead: 1, retry: 4, failed: 1))
            // Counts for an installation that does not exist (removed meanwhile) are dropped.
            try await store.countRelayOutcomes(installation: "unknown", RelayUsage(sent: 1))
            #expect(try await store.relayUsage(installation: "unknown") == RelayUsage())
            // Removing the installation removes its counts: a new one with the same id starts at zero.
            #expect(try await store.removeInstallation(id: id))
            try await store.addInstallation(Self.installation(id))
            #expect(try await store.relayUsage(installation: id) == RelayUsage())
        }
    }
}
