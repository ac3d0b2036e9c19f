import HeraldCore
import HeraldStore
import Testing

@testable import HeraldStorePostgres

/// The behaviours of `NotificationStoreTests` (items, pushes, feeds, outbox, claims), on PostgreSQL.
@Suite(.enabled(if: PostgresTestServer.isConfigured, "set \(PostgresTestServer.variable) to test PostgreSQL"))
struct PostgresNotificationStoreTests {
    @Test func aBroadcastCommitsItemsPushesAndTheNonceTogether() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            try await Fixtures.seed(store, subscribers: 20)
            let draft = NotificationDraft(title: "All", body: "hands")
            let outcome = try await store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 7))
            guard case .accepted(let receipt) = outcome else {
                Issue.record("not accepted: \(outcome)")
                return
            }
            #expect(receipt.sids.count == 20 && receipt.pushes == 20 && receipt.spam == 0)
            #expect(receipt.sids == Array(receipt.sids[0]...receipt.sids[0] + 19), "in subscriber order")
            #expect(try await store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 7)) == .replayed)
            let page = try await store.feed(of: Fixtures.subscriber(3).address, spam: false, limit: 10, offset: 0)
            #expect(page.total == 1)
            #expect(page.entries.first?.notification.app == "Desk")
            #expect(page.entries.first?.notification.epoch == 5_000)
            #expect(page.entries.first?.sender == Fixtures.other.address)
            #expect(try await store.pushCounts() == ["queued": 20])
            let due = try await store.duePushes(now: 1_000, limit: 100)
            #expect(due.count == 20)
            #expect(Set(due.map(\.apnsID)).count == 20, "each push has its own apns-id")
            #expect(due.allSatisfy { $0.notification?.title == "All" && $0.bound })
            #expect(try await store.duePushes(now: 999, limit: 100).isEmpty, "not due before it was queued")
        }
    }

    /// Type 2: the generic title and body, each recipient's own secret (lowercased); a recipient who does
    /// not follow the channel gets the item as spam and no push.
    @Test func aSecretMessageIsGenericAndAStrangerGetsSpamWithoutPush() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            try await Fixtures.seed(store, subscribers: 1)
            let follower = Fixtures.subscriber(0).address
            let stranger = Fixtures.subscriber(7).address
            _ = try await store.apply(Fixtures.change(key: Fixtures.subscriber(7), token: Fixtures.token(7), nonce: 1))
            // Hex of an ECIES secret's shape (97 bytes); uppercase is stored lowercased.
            let secrets = (String(repeating: "AB", count: 97), String(repeating: "0c", count: 97))
            let payload = """
                {"notification":{"title":"Private","body":"text"},"data":{"type":"2","asub":"s"},
                 "recipients":{"\(follower.lowercased)":{"secret":"\(secrets.0)"},
                               "\(stranger.lowercased)":{"secret":"\(secrets.1)"}}}
                """
            let outcome = try await store.submit(Fixtures.submission(payload, nonce: 8))
            guard case .accepted(let receipt) = outcome else {
                Issue.record("not accepted: \(outcome)")
                return
            }
            #expect(receipt.sids.count == 2 && receipt.spam == 1 && receipt.pushes == 1)
            let item = try #require(try await store.feed(of: follower, spam: false, limit: 5, offset: 0).entries.first)
            #expect(item.notification.title == DeliveredNotification.secretTitle(app: "Desk"))
            #expect(item.notification.body == DeliveredNotification.secretBody)
            #expect(item.notification.secret == secrets.0.lowercased() && item.notification.subject == "s")
            #expect(item.notification.kind == .secret)
            #expect(try await store.feed(of: stranger, spam: false, limit: 5, offset: 0).total == 0)
            let spam = try await store.feed(of: stranger, spam: true, limit: 5, offset: 0)
            #expect(spam.total == 1 && spam.entries.first?.notification.secret == secrets.1)
            let due = try await store.duePushes(now: 1_000, limit: 10)
            #expect(due.map(\.wallet) == [follower])
            let report = try #require(try await store.pushReport(sid: receipt.sids[0]))
            #expect(report.channel == Fixtures.other.address && report.recipient == follower)
            #expect(report.pushes == [PushReport.Push(platform: .ios, status: "queued", attempts: 0, lastError: nil)])
            #expect(try await store.pushReport(sid: receipt.sids[1])?.pushes == [])
            #expect(try await store.pushReport(sid: 999_999) == nil)
        }
    }

    @Test func everythingSurvivesReopeningAndSidsAreNeverReused() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            try await Fixtures.seed(store, subscribers: 2)
            let draft = NotificationDraft(title: "t", body: "b")
            guard
                case .accepted(let first) = try await store.submit(
                    Fixtures.submission(draft.broadcastPayload(), nonce: 1))
            else { throw StoreError("not accepted") }
            try await store.close()
            // Deleting the newest items (as an operator might) must not let their sids come back.
            try await database.execute("DELETE FROM feed_items")
            let reopened = try await database.open()
            #expect(try await reopened.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 1)) == .replayed)
            guard
                case .accepted(let second) = try await reopened.submit(
                    Fixtures.submission(draft.broadcastPayload(), nonce: 2))
            else { throw StoreError("not accepted") }
            #expect(try #require(second.sids.min()) > (try #require(first.sids.max())))
            #expect(try await reopened.pushCounts()["queued"] == 4)
        }
    }

    @Test func concurrentSendsWithOneNonceCommitOnce() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            try await Fixtures.seed(store, subscribers: 3)
            let submission = try Fixtures.submission(
                NotificationDraft(title: "t", body: "b").targetedPayload(to: [Fixtures.subscriber(0).address]),
                nonce: 99)
            let outcomes = try await withThrowingTaskGroup(of: NotificationOutcome.self) { group in
                for _ in 0..<16 { group.addTask { try await store.submit(submission) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .replayed }.count == 15)
            #expect(
                try await store.feed(of: Fixtures.subscriber(0).address, spam: false, limit: 10, offset: 0).total == 1)
        }
    }

    @Test func recordedResultsMoveAPushOutOfTheQueueOnce() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
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
            // Twice in one call: recorded in order, as on SQLite.
            _ = try await store.apply(Fixtures.change(token: Fixtures.token(77), nonce: 9, confirm: true))
            let confirmation = try #require(try await store.duePushes(now: 1_000, limit: 1).first)
            try await store.record([
                PushAttemptResult(id: confirmation.id, disposition: .retry(at: 1_010), error: "429"),
                PushAttemptResult(id: confirmation.id, disposition: .failed, error: "400"),
            ])
            #expect(try await store.pushCounts() == ["sent": 1, "failed": 1])
        }
    }

    @Test func aClaimedPushIsNotClaimedAgainUntilItsLeasePassesOrItsOutcomeIsRecorded() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
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

    @Test func claimsTakeOnlyTheirLanesPlatforms() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
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
        }
    }

    @Test func onlyFinishedPushesArePruned() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            try await Fixtures.seed(store, subscribers: 3)
            _ = try await store.submit(
                Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 4))
            let due = try await store.duePushes(now: 1_000, limit: 10)
            try await store.record([
                PushAttemptResult(id: due[0].id, disposition: .sent),
                PushAttemptResult(id: due[1].id, disposition: .failed, error: "400"),
            ])
            #expect(try await store.pruneFinishedPushes(queuedBefore: 1_000) == 0, "queued at 1000: not before")
            #expect(try await store.pruneFinishedPushes(queuedBefore: 1_001) == 2)
            #expect(try await store.pushCounts() == ["queued": 1], "a queued push stays, however old")
        }
    }

    @Test func aRemovedChannelKeepsItsItemsButCannotSend() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            try await Fixtures.seed(store, subscribers: 1)
            let draft = NotificationDraft(title: "t", body: "b")
            _ = try await store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 1))
            #expect(try await store.removeChannel(Fixtures.other.address))
            #expect(try await store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 2)) == .unknownChannel)
            #expect(
                try await store.feed(of: Fixtures.subscriber(0).address, spam: false, limit: 10, offset: 0).total == 1)
            // Refused for the unknown channel, nonce 2 is unspent.
            try await Fixtures.seed(store, subscribers: 0)
            #expect(try await store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 2)) != .replayed)
        }
    }

    /// Reads see every commit made before them, and pages come newest first with the whole set's size.
    @Test func everyReadSeesTheLatestCommitAndFeedsPageNewestFirst() async throws {
        try await TestDatabase.with { database in
            let store = try await database.open()
            try await Fixtures.seed(store, subscribers: 1)
            let wallet = Fixtures.subscriber(0).address
            for round in 1...6 {
                _ = try await store.submit(
                    Fixtures.submission(
                        NotificationDraft(title: "r\(round)", body: "b").broadcastPayload(), nonce: UInt64(10 + round)))
                let page = try await store.feed(of: wallet, spam: false, limit: 1, offset: 0)
                #expect(page.total == round)
                #expect(page.entries.first?.notification.title == "r\(round)")
                #expect(try await store.pushCounts()["queued"] == round)
                #expect(try await store.queuedPushCount() == round)
                #expect(try await store.duePushes(now: 1_000, limit: 100).count == round)
            }
            let page = try await store.feed(of: wallet, spam: false, limit: 2, offset: 1)
            #expect(page.total == 6 && page.entries.map(\.notification.title) == ["r5", "r4"])
            #expect(try await store.feed(of: wallet, spam: false, limit: 2, offset: 6).entries.isEmpty)
        }
    }
}
