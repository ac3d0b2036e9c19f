import HeraldCore
import HeraldStore
import Testing

@testable import HeraldStorePostgres

/// Two `PostgresHeraldStore`s on one database stand for two Herald nodes: whatever one node's memory
/// holds, the database decides replays, limits, sids and claims for both, under concurrent load. (A
/// replay across two stores, one after the other, is the conformance suite's
/// `theDatabaseNotMemoryJudgesAReplay`, run on both backends.)
@Suite(.enabled(if: PostgresTestServer.isConfigured, "set \(PostgresTestServer.variable) to test PostgreSQL"))
struct SeveralNodesTests {
    /// The same operation sent to both nodes at once: one commits it, the other answers replayed.
    @Test func oneOperationSentToBothNodesAtOnceCommitsOnce() async throws {
        try await TestDatabase.with { database in
            let nodes = [try await database.open(), try await database.open()]
            let outcomes = try await withThrowingTaskGroup(of: DeviceChangeOutcome.self) { group in
                for index in 0..<100 {
                    for node in nodes {
                        group.addTask {
                            try await node.apply(
                                Fixtures.change(token: Fixtures.token(index), nonce: UInt64(index), max: 1000))
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .registered(created: true) }.count == 100)
            #expect(outcomes.filter { $0 == .replayed }.count == 100)
            #expect(try await database.integers("SELECT count(*) FROM nonces") == [100])
        }
    }

    @Test func sidsIncreaseAcrossNodes() async throws {
        try await TestDatabase.with { database in
            let a = try await database.open()
            let b = try await database.open()
            try await Fixtures.seed(a, subscribers: 3)
            var last: Int64 = 0
            for round in 0..<6 {
                let node = round % 2 == 0 ? a : b
                let send = try Fixtures.submission(
                    NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: UInt64(100 + round),
                    policy: .unlimited)
                guard case .accepted(let receipt) = try await node.submit(send) else {
                    throw StoreError("not accepted")
                }
                #expect(receipt.sids.count == 3 && receipt.sids == receipt.sids.sorted())
                #expect(try #require(receipt.sids.first) > last, "round \(round)")
                last = try #require(receipt.sids.last)
            }
            // Sent at once from both nodes, no sid is given twice.
            let sids = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for round in 0..<20 {
                    let node = round % 2 == 0 ? a : b
                    let send = try Fixtures.submission(
                        NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: UInt64(200 + round),
                        policy: .unlimited)
                    group.addTask {
                        guard case .accepted(let receipt) = try await node.submit(send) else { return [] }
                        return receipt.sids
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(sids.count == 60 && Set(sids).count == 60 && sids.allSatisfy { $0 > last })
        }
    }

    /// Each node's count sees the other's bindings only under the wallet's lock: without it, both could
    /// count 4 of 5 and both insert.
    @Test func theBindingLimitHoldsWhenTwoNodesRegisterForOneWalletAtOnce() async throws {
        try await TestDatabase.with { database in
            let nodes = [try await database.open(), try await database.open()]
            let outcomes = try await withThrowingTaskGroup(of: DeviceChangeOutcome.self) { group in
                for index in 0..<24 {
                    let node = nodes[index % 2]
                    group.addTask {
                        try await node.apply(
                            Fixtures.change(token: Fixtures.token(index), nonce: UInt64(index), max: 5))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .registered(created: true) }.count == 5)
            #expect(outcomes.filter { $0 == .overLimit }.count == 19)
            #expect(try await nodes[0].bindingCount() == 5)
            #expect(try await database.integers("SELECT count(*) FROM nonces") == [5], "refusals spend no nonce")
        }
    }

    /// The same for batches: a node's registrations of several wallets take their locks and read their
    /// counts in one statement (migration 0014's function), whose count must still see what the other node
    /// committed under those locks. Each round registers a new token for every wallet on both nodes at once.
    @Test func theBindingLimitHoldsWhenTwoNodesRegisterBatchesForTheSameWallets() async throws {
        try await TestDatabase.with { database in
            let nodes = [try await database.open(), try await database.open()]
            let wallets = (0..<8).map(Fixtures.subscriber)
            var outcomes: [DeviceChangeOutcome] = []
            for round in 0..<6 {
                outcomes += try await withThrowingTaskGroup(of: DeviceChangeOutcome.self) { group in
                    for (walletIndex, key) in wallets.enumerated() {
                        for (nodeIndex, node) in nodes.enumerated() {
                            let index = (round * wallets.count + walletIndex) * nodes.count + nodeIndex
                            group.addTask {
                                try await node.apply(
                                    Fixtures.change(
                                        key: key, token: Fixtures.token(index), nonce: UInt64(index), max: 5))
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(outcomes.filter { $0 == .registered(created: true) }.count == 5 * wallets.count)
            #expect(outcomes.filter { $0 == .overLimit }.count == 7 * wallets.count)
            let counts = try await database.integers("SELECT count(*) FROM bindings GROUP BY wallet")
            #expect(counts == Array(repeating: 5, count: wallets.count))
        }
    }

    @Test func twoNodesClaimingAtOnceNeverGetTheSamePush() async throws {
        try await TestDatabase.with { database in
            let a = try await database.open()
            let b = try await database.open()
            try await Fixtures.seed(a, subscribers: 60)
            _ = try await a.submit(
                Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 9))
            let claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for worker in 0..<12 {
                    let node = worker % 2 == 0 ? a : b
                    group.addTask {
                        var ids: [Int64] = []
                        while true {
                            let batch = try await node.claimDuePushes(
                                now: 1_000, limit: 4, platforms: nil, owner: "worker-\(worker)", leaseUntil: 1_060)
                            if batch.isEmpty { return ids }
                            ids += batch.map(\.id)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(claimed.count == 60, "every push claimed once")
            #expect(Set(claimed).count == 60, "none claimed twice")
        }
    }

    @Test func aClaimWhoseLeasePassedIsClaimableByTheOtherNode() async throws {
        try await TestDatabase.with { database in
            let a = try await database.open()
            let b = try await database.open()
            try await Fixtures.seed(a, subscribers: 2)
            _ = try await a.submit(
                Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 9))
            let held = try await a.claimDuePushes(now: 1_000, limit: 10, platforms: nil, owner: "a", leaseUntil: 1_030)
            #expect(held.count == 2)
            #expect(
                try await b.claimDuePushes(now: 1_029, limit: 10, platforms: nil, owner: "b", leaseUntil: 1_090).isEmpty
            )
            // Node a died holding them: once its lease passed, b takes them, content and all.
            let taken = try await b.claimDuePushes(now: 1_030, limit: 10, platforms: nil, owner: "b", leaseUntil: 1_090)
            #expect(Set(taken.map(\.id)) == Set(held.map(\.id)))
            #expect(taken.allSatisfy { $0.notification?.title == "t" && $0.bound })
            try await b.record(taken.map { PushAttemptResult(id: $0.id, disposition: .sent) })
            #expect(try await a.pushCounts() == ["sent": 2])
            #expect(
                try await database.integers("SELECT count(*) FROM push_outbox WHERE claimed_until IS NOT NULL") == [0])
        }
    }

    /// Two nodes pruning at the same moment share the rows: each is deleted, and counted, once.
    @Test func twoNodesPruningAtOnceCountEachRowOnce() async throws {
        try await TestDatabase.with { database in
            let a = try await database.open()
            let b = try await database.open()
            try await database.execute(
                """
                INSERT INTO nonces (digest, retained_until)
                SELECT uuid_send(gen_random_uuid()), 10 FROM generate_series(1, 12000)
                """
            )
            async let first = a.pruneNonces(expiredBefore: 11)
            async let second = b.pruneNonces(expiredBefore: 11)
            let total = try await first + second
            #expect(total == 12_000)
            #expect(try await database.integers("SELECT count(*) FROM nonces") == [0])
        }
    }
}
