import HeraldCore
import HeraldStore
import Testing

/// Device bindings, nonces, the binding limit and pruning: the `HeraldStore` contract, on every backend.
@Suite struct BindingConformanceTests {
    @Test(arguments: StoreBackend.available)
    func registerRefreshUnregisterAndAbsent(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
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

    @Test(arguments: StoreBackend.available)
    func aNonceIsSpentOnceAcrossActions(_ backend: StoreBackend) async throws {
        // `throws` spelled out: every `try` here is inside #expect, where closure inference does not look.
        try await backend.withStore { store throws in
            #expect(try await store.apply(Fixtures.change(nonce: 7)) == .registered(created: true))
            #expect(try await store.apply(Fixtures.change(nonce: 7)) == .replayed)
            #expect(try await store.apply(Fixtures.change(.unregister, nonce: 7)) == .replayed)
            // The replay changed nothing: the binding is still there.
            #expect(try await store.bindingCount() == 1)
            // Another wallet may use the same number.
            #expect(try await store.apply(Fixtures.change(key: Fixtures.other, nonce: 7)) == .registered(created: true))
        }
    }

    @Test(arguments: StoreBackend.available)
    func theBindingLimitRefusesNewTokensButNotRefreshes(_ backend: StoreBackend) async throws {
        // `throws` spelled out: every `try` here is inside #expect, where closure inference does not look.
        try await backend.withStore { store throws in
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

    @Test(arguments: StoreBackend.available)
    func aChangeRefusedOverTheLimitLeavesItsNonceUnspent(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let store = try await database.openStore()
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
    /// transactions (fewer commits than writes), as the writer's statistics count them.
    @Test(arguments: StoreBackend.available)
    func concurrentChangesAreGroupCommittedAndEachReplayWinsOnce(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let before = store.writerStatistics
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
            let after = store.writerStatistics
            let commits = after.transactions - before.transactions
            #expect(commits > 0 && commits < 800, "800 writes in \(commits) transactions")
            // A replay is a write too: the database judged it, in a transaction that committed.
            #expect(after.writes - before.writes == 800)
            // Each write waits at least as long as its own transaction takes, and every transaction
            // carries at least one write, so the summed waits cover the writer's busy time.
            let busy = after.busySeconds - before.busySeconds
            #expect(busy > 0 && busy <= after.waitSeconds - before.waitSeconds)
        }
    }

    @Test(arguments: StoreBackend.available)
    func pruningForgetsExpiredNoncesAndStaleBindings(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
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

    /// A register that creates a binding queues one confirmation push with it; a refresh queues none; a
    /// register after an unregister creates the binding again, and queues again.
    @Test(arguments: StoreBackend.available)
    func aCreatedBindingQueuesOneSetupConfirmation(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
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

    @Test(arguments: StoreBackend.available)
    func aDeadTokenLosesEveryBindingAndItsPushesAreNoLongerBound(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
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
}

/// What the planners make easy to state: a refusal writes nothing, its nonce included, and a replay is
/// answered as one before any rule is weighed.
@Suite struct RefusalConformanceTests {
    @Test(arguments: StoreBackend.available)
    func anOverLimitReplayIsAReplay(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            #expect(
                try await store.apply(Fixtures.change(token: Fixtures.token(1), nonce: 1, max: 1))
                    == .registered(created: true))
            // Nonce 1 again, for a binding the limit would refuse: the replay decides.
            let again = try await store.apply(Fixtures.change(token: Fixtures.token(2), nonce: 1, max: 1))
            #expect(again == .replayed)
        }
    }

    @Test(arguments: StoreBackend.available)
    func refusedSubscriptionsAndNotificationsSpendNoNonce(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let store = try await database.openStore()
            let follower = Fixtures.subscriber(0)
            #expect(try await store.apply(Fixtures.subscription(key: follower, nonce: 1)) == .unknownChannel)
            let broadcast = try Fixtures.submission(
                NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 1)
            #expect(try await store.submit(broadcast) == .unknownChannel)
            #expect(try await database.integers("SELECT count(*) FROM nonces") == [0])
            #expect(try await database.integers("SELECT count(*) FROM notifications") == [0])
            try await store.saveChannel(
                ChannelRecord(address: Fixtures.other.address, name: "Desk", icon: "", url: "", createdAt: 1))
            #expect(try await store.apply(Fixtures.subscription(key: follower, nonce: 1)) == .subscribed(created: true))
            guard case .accepted(let receipt) = try await store.submit(broadcast) else {
                Issue.record("the same notification was not accepted once its channel existed")
                return
            }
            #expect(receipt.sids.count == 1)
        }
    }
}
