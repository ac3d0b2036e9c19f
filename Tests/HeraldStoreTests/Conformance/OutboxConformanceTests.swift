import HeraldCore
import HeraldStore
import Testing

/// The push outbox: due pushes, claims and their leases, recorded outcomes, reports and pruning: the
/// `HeraldStore` contract, on every backend.
@Suite struct OutboxConformanceTests {
    @Test(arguments: StoreBackend.available)
    func recordedResultsMoveAPushOutOfTheQueueOnce(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 1)
            _ = try await store.submit(
                Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 3))
            let push = try #require(try await store.duePushes(now: 1_000, limit: 1).first)
            try await store.record([PushAttemptResult(id: push.id, disposition: .retry(at: 1_050), error: "503")])
            #expect(try await store.duePushes(now: 1_049, limit: 1).isEmpty)
            #expect(try await store.duePushes(now: 1_050, limit: 1).first?.attempts == 1)
            try await store.record([PushAttemptResult(id: push.id, disposition: .sent)])
            // A late duplicate result cannot bring a sent push back.
            try await store.record([PushAttemptResult(id: push.id, disposition: .retry(at: 1_060))])
            #expect(try await store.pushCounts() == ["sent": 1])
            let report = try await store.pushReport(sid: try #require(push.sid))
            #expect(report?.pushes == [PushReport.Push(platform: .ios, status: "sent", attempts: 2, lastError: "503")])
            // Twice in one call: recorded in order.
            _ = try await store.apply(Fixtures.change(token: Fixtures.token(77), nonce: 9, confirm: true))
            let confirmation = try #require(try await store.duePushes(now: 1_000, limit: 1).first)
            try await store.record([
                PushAttemptResult(id: confirmation.id, disposition: .retry(at: 1_010), error: "429"),
                PushAttemptResult(id: confirmation.id, disposition: .failed, error: "400"),
            ])
            #expect(try await store.pushCounts() == ["sent": 1, "failed": 1])
        }
    }

    @Test(arguments: StoreBackend.available)
    func aClaimedPushStaysClaimedUntilItsLeasePassesOrItsOutcomeIsRecorded(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 3)
            _ = try await store.submit(
                Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 5))
            let first = try await store.claimDuePushes(
                now: 1_000, limit: 2, platforms: nil, owner: "a", leaseUntil: 1_060)
            #expect(first.count == 2)
            let second = try await store.claimDuePushes(
                now: 1_001, limit: 5, platforms: nil, owner: "b", leaseUntil: 1_061)
            #expect(second.count == 1, "only the one unclaimed push")
            #expect(Set(first.map(\.id)).isDisjoint(with: second.map(\.id)))
            #expect(second.first?.notification?.title == "t", "a claim carries the content, as duePushes does")
            #expect(
                try await store.claimDuePushes(now: 1_059, limit: 5, platforms: nil, owner: "b", leaseUntil: 2_000)
                    .isEmpty)
            #expect(try await store.duePushes(now: 1_000, limit: 10).count == 3, "a plain read sees claimed pushes")

            // An outcome ends the claim: a retry is claimable when due, whoever claimed it before.
            try await store.record([PushAttemptResult(id: first[0].id, disposition: .retry(at: 1_010))])
            let retried = try await store.claimDuePushes(
                now: 1_010, limit: 5, platforms: nil, owner: "b", leaseUntil: 1_070)
            #expect(retried.map(\.id) == [first[0].id] && retried.first?.attempts == 1)

            // A claim whose holder died lapses with its lease.
            let lapsed = try await store.claimDuePushes(
                now: 1_060, limit: 5, platforms: nil, owner: "b", leaseUntil: 1_120)
            #expect(lapsed.map(\.id) == [first[1].id])
        }
    }

    /// A send that outlived its lease must not touch the claim another node took meanwhile; a deferred
    /// push (its service had no room) waits without using up an attempt.
    @Test(arguments: StoreBackend.available)
    func aLateOutcomeLeavesAnotherNodesClaimAndADeferralCountsNoAttempt(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 1)
            _ = try await store.submit(
                Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 6))
            let claimedByA = try #require(
                try await store.claimDuePushes(now: 1_000, limit: 1, platforms: nil, owner: "a", leaseUntil: 1_005)
                    .first)
            let claimedByB = try await store.claimDuePushes(
                now: 1_006, limit: 1, platforms: nil, owner: "b", leaseUntil: 1_066)
            #expect(claimedByB.map(\.id) == [claimedByA.id], "A's lease passed")
            // A's answer comes late: it changes nothing, and B still holds the push.
            try await store.record([PushAttemptResult(id: claimedByA.id, disposition: .sent)], owner: "a")
            #expect(try await store.pushCounts() == ["queued": 1])
            #expect(
                try await store.claimDuePushes(now: 1_010, limit: 1, platforms: nil, owner: "c", leaseUntil: 1_070)
                    .isEmpty, "B's claim stands")
            // B defers it twice: queued, due again, no attempt counted; then B's send is recorded.
            try await store.record(
                [PushAttemptResult(id: claimedByA.id, disposition: .deferred(until: 1_011), error: "busy")], owner: "b")
            let deferred = try await store.claimDuePushes(
                now: 1_011, limit: 1, platforms: nil, owner: "b", leaseUntil: 1_071)
            #expect(deferred.map(\.attempts) == [0])
            try await store.record([PushAttemptResult(id: claimedByA.id, disposition: .sent)], owner: "b")
            #expect(try await store.pushCounts() == ["sent": 1])
            let report = try await store.pushReport(sid: try #require(claimedByA.sid))
            #expect(report?.pushes.first?.attempts == 1)
        }
    }

    @Test(arguments: StoreBackend.available)
    func claimsTakeOnlyTheirLanesPlatforms(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let store = try await database.openStore()
            try await Fixtures.seed(store, subscribers: 2)
            _ = try await store.submit(
                Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 6))
            let android = try await store.claimDuePushes(
                now: 1_000, limit: 10, platforms: [.android], owner: "a", leaseUntil: 1_060)
            #expect(android.isEmpty, "every binding here is ios")
            let ios = try await store.claimDuePushes(
                now: 1_000, limit: 10, platforms: [.ios, .iosSandbox], owner: "a", leaseUntil: 1_060)
            #expect(ios.count == 2)
            #expect(try await database.integers("SELECT count(*) FROM push_outbox WHERE claimed_by = 'a'") == [2])
            // A plain read filters the same way.
            #expect(try await store.duePushes(now: 1_000, limit: 10, platforms: [.android]).isEmpty)
            #expect(try await store.duePushes(now: 1_000, limit: 10, platforms: [.ios]).count == 2)
        }
    }

    /// A lane of several platforms takes the oldest due pushes across them, in (next attempt, id) order, and no
    /// more than its limit in all, however many each platform holds; what another owner holds is passed over.
    @Test(arguments: StoreBackend.available)
    func aClaimOfSeveralPlatformsTakesTheOldestAcrossThem(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            // Setup confirmations, due when registered: sandbox at 1,000 and 1,003, production at 1,001 and
            // 1,002, 1,004 and 1,005, FCM at 999 (another lane's).
            let registrations: [(Platform, Int64)] = [
                (.iosSandbox, 1_000), (.ios, 1_001), (.ios, 1_002), (.iosSandbox, 1_003), (.ios, 1_004),
                (.ios, 1_005), (.android, 999),
            ]
            for (index, (platform, now)) in registrations.enumerated() {
                _ = try await store.apply(
                    Fixtures.change(
                        token: Fixtures.token(index + 1), platform: platform, nonce: UInt64(100 + index), now: now,
                        confirm: true))
            }
            let apple: Set<Platform> = [.ios, .iosSandbox]
            let first = try await store.claimDuePushes(
                now: 1_010, limit: 3, platforms: apple, owner: "a", leaseUntil: 1_070)
            #expect(first.map(\.platform) == [.iosSandbox, .ios, .ios])
            #expect(first.map(\.queuedAt) == [1_000, 1_001, 1_002])
            // The next claim, another node's, passes over what "a" holds.
            let second = try await store.claimDuePushes(
                now: 1_010, limit: 2, platforms: apple, owner: "b", leaseUntil: 1_070)
            #expect(second.map(\.platform) == [.iosSandbox, .ios])
            #expect(second.map(\.queuedAt) == [1_003, 1_004])
            // Not yet due at 1,004: the last one.
            #expect(
                try await store.claimDuePushes(now: 1_004, limit: 5, platforms: apple, owner: "b", leaseUntil: 1_070)
                    .isEmpty)
            let rest = try await store.claimDuePushes(
                now: 1_010, limit: 5, platforms: apple, owner: "b", leaseUntil: 1_070)
            #expect(rest.map(\.queuedAt) == [1_005])
            // Every platform at once (no set given) still finds FCM's.
            let all = try await store.claimDuePushes(
                now: 1_010, limit: 5, platforms: nil, owner: "c", leaseUntil: 1_070)
            #expect(all.map(\.platform) == [.android])
            #expect(
                try await store.claimDuePushes(now: 1_010, limit: 5, platforms: [], owner: "c", leaseUntil: 1_070)
                    .isEmpty)
        }
    }

    /// A claim past a position (a lane's `ClaimCursor`) looks only at pushes after it in (next attempt, id)
    /// order, across the platforms it names; each push answers its position, and one behind the position
    /// (a retry due earlier) is found only by a claim from the start.
    @Test(arguments: StoreBackend.available)
    func aClaimPastAPositionTakesOnlyThePushesAfterIt(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let registrations: [(Platform, Int64)] = [
                (.ios, 1_000), (.iosSandbox, 1_001), (.ios, 1_001), (.iosSandbox, 1_002), (.ios, 1_003),
            ]
            for (index, (platform, now)) in registrations.enumerated() {
                _ = try await store.apply(
                    Fixtures.change(
                        token: Fixtures.token(index + 1), platform: platform, nonce: UInt64(200 + index), now: now,
                        confirm: true))
            }
            let apple: Set<Platform> = [.ios, .iosSandbox]
            let first = try await store.claimDuePushes(
                now: 1_010, limit: 2, platforms: apple, owner: "a", leaseUntil: 1_070, after: nil)
            #expect(first.map(\.nextAttemptAt) == [1_000, 1_001])
            #expect(first.map(\.position) == first.map { OutboxPosition(nextAttemptAt: $0.queuedAt, id: $0.id) })
            let position = try #require(first.last?.position)
            // The first push is given back, due again at 1,001, before the position (1,001 and a larger id).
            try await store.record([PushAttemptResult(id: first[0].id, disposition: .deferred(until: 1_001))])
            let next = try await store.claimDuePushes(
                now: 1_010, limit: 5, platforms: apple, owner: "a", leaseUntil: 1_070, after: position)
            #expect(next.map(\.nextAttemptAt) == [1_001, 1_002, 1_003])
            #expect(next.allSatisfy { $0.position > position } && !next.contains { $0.id == first[0].id })
            // Past the last position nothing is left; from the start, the push given back.
            let last = try #require(next.last?.position)
            #expect(
                try await store.claimDuePushes(
                    now: 1_010, limit: 5, platforms: apple, owner: "a", leaseUntil: 1_070, after: last
                ).isEmpty)
            let again = try await store.claimDuePushes(
                now: 1_010, limit: 5, platforms: apple, owner: "a", leaseUntil: 1_070, after: nil)
            #expect(again.map(\.id) == [first[0].id] && again.first?.nextAttemptAt == 1_001)
        }
    }

    @Test(arguments: StoreBackend.available)
    func manyOutcomesInOneCallEachReachTheirOwnRow(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 8)
            _ = try await store.submit(
                Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 6))
            let due = try await store.duePushes(now: 1_000, limit: 10)
            #expect(due.count == 8)
            // As a batch comes back from a provider that is missing or down: many alike, some not.
            try await store.record([
                PushAttemptResult(id: due[0].id, disposition: .failed, error: "no APNs provider configured"),
                PushAttemptResult(id: due[1].id, disposition: .sent),
                PushAttemptResult(id: due[2].id, disposition: .failed, error: "no APNs provider configured"),
                PushAttemptResult(id: due[3].id, disposition: .retry(at: 1_020), error: "503"),
                PushAttemptResult(id: due[4].id, disposition: .failed, error: "400 BadDeviceToken"),
                PushAttemptResult(id: due[5].id, disposition: .retry(at: 1_020), error: "503"),
                PushAttemptResult(id: due[6].id, disposition: .retry(at: 1_030), error: "429"),
                PushAttemptResult(id: due[7].id, disposition: .failed, error: "no APNs provider configured"),
            ])
            #expect(try await store.pushCounts() == ["sent": 1, "failed": 4, "queued": 3])
            #expect(try await store.duePushes(now: 1_019, limit: 10).isEmpty)
            #expect(Set(try await store.duePushes(now: 1_020, limit: 10).map(\.id)) == [due[3].id, due[5].id])
            #expect(try await store.duePushes(now: 1_030, limit: 10).count == 3)
            var errors: [String?] = []
            for push in due {
                let sid = try #require(push.sid)
                let report = try #require(try await store.pushReport(sid: sid))
                errors += report.pushes.map(\.lastError)
            }
            #expect(
                errors.map { $0 ?? "" }.sorted() == [
                    "", "400 BadDeviceToken", "429", "503", "503", "no APNs provider configured",
                    "no APNs provider configured", "no APNs provider configured",
                ])
        }
    }

    @Test(arguments: StoreBackend.available)
    func onlyFinishedPushesArePruned(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 4)
            _ = try await store.submit(
                Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 4))
            let due = try await store.duePushes(now: 1_000, limit: 10)
            try await store.record([
                PushAttemptResult(id: due[0].id, disposition: .sent),
                PushAttemptResult(id: due[1].id, disposition: .failed, error: "400"),
                PushAttemptResult(id: due[2].id, disposition: .pruned, error: "410"),
            ])
            #expect(try await store.pushCounts() == ["sent": 1, "failed": 1, "pruned": 1, "queued": 1])
            #expect(try await store.pruneFinishedPushes(queuedBefore: 1_000) == 0, "queued at 1000: not before")
            #expect(try await store.pruneFinishedPushes(queuedBefore: 1_001) == 3)
            #expect(try await store.pushCounts() == ["queued": 1], "a queued push stays, however old")
        }
    }
}
