import Foundation
import HeraldCore
import HeraldStore
import Testing

@testable import HeraldStorePostgres

/// The store behaviours of `SQLiteHeraldStoreTests`, on PostgreSQL.
@Suite(.enabled(if: PostgresTestServer.isConfigured, "set \(PostgresTestServer.variable) to test PostgreSQL"))
struct PostgresHeraldStoreTests {
    @Test func registerRefreshUnregisterAndAbsent() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            #expect(try await store.apply(Fixtures.change(nonce: 1, now: 1_000)) == .registered(created: true))
            #expect(try await store.apply(Fixtures.change(nonce: 2, now: 1_500)) == .registered(created: false))
            let bindings = try await store.bindings(of: Fixtures.key.address)
            #expect(bindings.count == 1)
            #expect(bindings.first?.createdAt == 1_000 && bindings.first?.lastSeen == 1_500)
            #expect(try await store.apply(Fixtures.change(.unregister, nonce: 3)) == .unregistered)
            #expect(try await store.apply(Fixtures.change(.unregister, nonce: 4)) == .absent)
            #expect(try await store.bindingCount() == 0)
            #expect(try await store.publicKey(of: Fixtures.key.address) == Fixtures.key.publicKey)
            #expect(try await store.publicKey(of: Fixtures.other.address) == nil)
        }
    }

    @Test func aNonceIsSpentOnceAcrossActions() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            #expect(try await store.apply(Fixtures.change(nonce: 7)) == .registered(created: true))
            #expect(try await store.apply(Fixtures.change(nonce: 7)) == .replayed)
            #expect(try await store.apply(Fixtures.change(.unregister, nonce: 7)) == .replayed)
            // The replay changed nothing: the binding is still there.
            #expect(try await store.bindingCount() == 1)
            // Another wallet may use the same number.
            #expect(try await store.apply(Fixtures.change(key: Fixtures.other, nonce: 7)) == .registered(created: true))
        }
    }

    @Test func theBindingLimitRefusesNewTokensButNotRefreshes() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            func register(_ token: Int, nonce: UInt64) async throws -> DeviceChangeOutcome {
                try await store.apply(Fixtures.change(token: Fixtures.token(token), nonce: nonce, max: 2))
            }
            #expect(try await register(1, nonce: 1) == .registered(created: true))
            #expect(try await register(2, nonce: 2) == .registered(created: true))
            #expect(try await register(3, nonce: 3) == .overLimit)
            #expect(try await register(1, nonce: 4) == .registered(created: false))
            // A refused change spends no nonce: the same operation succeeds once a slot is free.
            #expect(
                try await store.apply(Fixtures.change(.unregister, token: Fixtures.token(2), nonce: 5, max: 2))
                    == .unregistered)
            #expect(try await register(3, nonce: 3) == .registered(created: true))
        }
    }

    @Test func aChangeRefusedOverTheLimitLeavesItsNonceUnspent() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            #expect(
                try await store.apply(Fixtures.change(token: Fixtures.token(1), nonce: 1, max: 1))
                    == .registered(created: true))
            #expect(try await store.apply(Fixtures.change(token: Fixtures.token(2), nonce: 2, max: 1)) == .overLimit)
            #expect(try await database.integers("SELECT count(*) FROM nonces") == [1])
            #expect(
                try await store.apply(Fixtures.change(token: Fixtures.token(2), nonce: 2, max: 2))
                    == .registered(created: true))
        }
    }

    /// Every nonce submitted twice at once: exactly one of each pair wins, and the writes share
    /// transactions (fewer commits than writes).
    @Test func concurrentChangesAreGroupCommittedAndEachReplayWinsOnce() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            let before = store.writer.commits
            let outcomes = try await withThrowingTaskGroup(of: DeviceChangeOutcome.self) { group in
                for index in 0..<400 {
                    for _ in 0..<2 {
                        group.addTask {
                            try await store.apply(
                                Fixtures.change(token: Fixtures.token(index), nonce: UInt64(index), max: 1000))
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .registered(created: true) }.count == 400)
            #expect(outcomes.filter { $0 == .replayed }.count == 400)
            #expect(try await store.bindingCount() == 400)
            let commits = store.writer.commits - before
            #expect(commits < 800, "800 writes in \(commits) transactions")
        }
    }

    @Test func pruningForgetsExpiredNoncesAndStaleBindings() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            _ = try await store.apply(Fixtures.change(token: Fixtures.token(1), nonce: 1, now: 100, retainedUntil: 500))
            _ = try await store.apply(
                Fixtures.change(token: Fixtures.token(2), nonce: 2, now: 900, retainedUntil: 1_500))
            #expect(try await store.pruneNonces(expiredBefore: 1_000) == 1)
            // Nonce 1 is forgotten (its operation expired long ago); nonce 2 is still spent.
            #expect(try await store.apply(Fixtures.change(token: Fixtures.token(1), nonce: 2, now: 1_000)) == .replayed)
            #expect(try await store.pruneBindings(lastSeenBefore: 500) == 1)
            #expect(try await store.bindings(of: Fixtures.key.address).map(\.deviceToken) == [Fixtures.token(2)])
        }
    }

    @Test func dataSurvivesReopening() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            _ = try await store.apply(Fixtures.change(nonce: 1, retainedUntil: 3_000))
            _ = try await store.apply(Fixtures.change(token: Fixtures.token(9), nonce: 2, retainedUntil: 10))
            try await store.close()
            let reopened = try await database.open()
            #expect(try await reopened.bindingCount() == 2)
            #expect(try await reopened.apply(Fixtures.change(nonce: 1, retainedUntil: 3_000)) == .replayed)
            // The table holds nonce 2 until it is pruned: the database decides, not a reloaded memory.
            #expect(try await reopened.apply(Fixtures.change(nonce: 2, retainedUntil: 3_000)) == .replayed)
            #expect(try await reopened.pruneNonces(expiredBefore: 11) == 1)
            #expect(
                try await reopened.apply(Fixtures.change(nonce: 2, retainedUntil: 3_000)) == .registered(created: false)
            )
            #expect(try await reopened.publicKey(of: Fixtures.key.address) == Fixtures.key.publicKey)
        }
    }

    @Test func aClosedStoreRefusesWork() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            try await store.checkHealth()
            try await store.close()
            await #expect(throws: StoreError.self) { try await store.apply(Fixtures.change(nonce: 1)) }
            await #expect(throws: StoreError.self) { try await store.checkHealth() }
            try await store.close()
        }
    }

    /// A register that creates a binding queues one confirmation push with it; a refresh queues none; a
    /// register after an unregister creates the binding again, and queues again.
    @Test func aCreatedBindingQueuesOneSetupConfirmation() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            #expect(try await store.apply(Fixtures.change(nonce: 1, confirm: true)) == .registered(created: true))
            #expect(try await store.apply(Fixtures.change(nonce: 2, confirm: true)) == .registered(created: false))
            var due = try await store.duePushes(now: 1_000, limit: 10)
            #expect(due.count == 1)
            #expect(due.first?.sid == nil && due.first?.notification == nil && due.first?.bound == true)
            #expect(due.first?.apnsID.count == 16)
            _ = try await store.apply(Fixtures.change(.unregister, nonce: 3))
            _ = try await store.apply(Fixtures.change(nonce: 4, confirm: true))
            due = try await store.duePushes(now: 1_000, limit: 10)
            #expect(due.count == 2)
            // Refused over the limit: no binding, so no confirmation either.
            #expect(
                try await store.apply(Fixtures.change(token: Fixtures.token(5), nonce: 5, max: 1, confirm: true))
                    == .overLimit)
            #expect(try await store.queuedPushCount() == 2)
        }
    }

    @Test func aDeadTokenLosesEveryBindingAndItsPushesAreNoLongerBound() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            let token = Fixtures.token(42)
            _ = try await store.apply(Fixtures.change(token: token, nonce: 1, confirm: true))
            _ = try await store.apply(Fixtures.change(key: Fixtures.other, token: token, nonce: 1, confirm: true))
            _ = try await store.apply(Fixtures.change(token: token, platform: .android, nonce: 2))
            #expect(try await store.removeBindings(platform: .ios, deviceToken: token) == 2)
            #expect(try await store.bindingCount() == 1, "the same token on another platform stays")
            let due = try await store.duePushes(now: 1_000, limit: 10)
            #expect(due.count == 2 && due.allSatisfy { !$0.bound })
        }
    }

    @Test func theFirstPublicKeyOfAWalletStands() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            try await store.rememberPublicKey(Fixtures.key.publicKey, of: Fixtures.key.address, now: 1)
            // A wallet's key never changes; a second call (any node) leaves the first.
            try await store.rememberPublicKey(Fixtures.other.publicKey, of: Fixtures.key.address, now: 2)
            let other = try await database.open()
            try await other.rememberPublicKey(Fixtures.other.publicKey, of: Fixtures.key.address, now: 3)
            #expect(try await other.publicKey(of: Fixtures.key.address) == Fixtures.key.publicKey)
        }
    }

    @Test func channelsAndSubscriptions() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            let channel = Fixtures.other.address
            let follower = Fixtures.subscriber(0)
            // Unknown channel: nothing changes and the nonce is not spent.
            #expect(try await store.apply(Fixtures.subscription(key: follower, nonce: 1)) == .unknownChannel)
            try await store.saveChannel(ChannelRecord(address: channel, name: "Old", icon: "", url: "", createdAt: 5))
            try await store.saveChannel(
                ChannelRecord(address: channel, name: "Desk", icon: "i", url: "u", createdAt: 9))
            #expect(
                try await store.channel(channel)
                    == ChannelRecord(address: channel, name: "Desk", icon: "i", url: "u", createdAt: 5))
            try await store.saveChannel(
                ChannelRecord(address: Fixtures.key.address, name: "Alpha", icon: "", url: "", createdAt: 1))
            #expect(try await store.channels().map(\.name) == ["Alpha", "Desk"])

            #expect(try await store.apply(Fixtures.subscription(key: follower, nonce: 1)) == .subscribed(created: true))
            #expect(try await store.apply(Fixtures.subscription(key: follower, nonce: 1)) == .replayed)
            #expect(
                try await store.apply(Fixtures.subscription(key: follower, nonce: 2)) == .subscribed(created: false))
            _ = try await store.apply(
                Fixtures.subscription(channel: Fixtures.key.address, key: follower, nonce: 3, now: 950))
            #expect(try await store.subscriberCount(of: channel) == 1)
            #expect(
                try await store.subscriptions(of: follower.address)
                    == [
                        SubscriptionRecord(channel: channel, name: "Desk", since: 900),
                        SubscriptionRecord(channel: Fixtures.key.address, name: "Alpha", since: 950),
                    ])
            #expect(
                try await store.apply(Fixtures.subscription(.unsubscribe, key: follower, nonce: 4))
                    == .unsubscribed(existed: true))
            #expect(
                try await store.apply(Fixtures.subscription(.unsubscribe, key: follower, nonce: 5))
                    == .unsubscribed(existed: false))
            #expect(try await store.publicKey(of: follower.address) == follower.publicKey)

            #expect(try await store.removeChannel(Fixtures.key.address))
            #expect(try await store.removeChannel(Fixtures.key.address) == false)
            #expect(try await store.subscriptions(of: follower.address).isEmpty, "its subscriptions went with it")
            #expect(try await store.channel(Fixtures.key.address) == nil)
        }
    }
}
