import Foundation
import GRDB
import HeraldCore
import Testing

@testable import HeraldStore

@Suite struct NotificationStoreTests {
    static let channel = try! PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")

    static func subscriber(_ index: Int) -> PrivateKey {
        try! PrivateKey(bytes: Array(repeating: 0, count: 30) + [UInt8((index + 1) >> 8), UInt8((index + 1) & 0xff)])
    }

    static func submission(_ payload: String, nonce: UInt64, epoch: Int64 = 5_000) throws -> NotificationSubmission {
        NotificationSubmission(
            channel: channel.address, publicKey: channel.publicKey, payload: try NotificationPayload.parse(payload),
            nonce: UInt256(nonce), nonceRetainedUntil: 4_000_000_000, now: 1_000, epoch: epoch)
    }

    /// A channel with `count` subscribers, each with one iOS binding.
    static func seeded(_ count: Int) async throws -> TemporaryStore {
        let temp = try TemporaryStore()
        try await temp.store.saveChannel(
            ChannelRecord(address: channel.address, name: "Desk", icon: "i", url: "u", createdAt: 1))
        for index in 0..<count {
            let key = subscriber(index)
            _ = try await temp.store.apply(
                SubscriptionChange(
                    action: .subscribe, channel: channel.address, subscriber: key.address, publicKey: key.publicKey,
                    nonce: UInt256(1), nonceRetainedUntil: 10_000, now: 900))
            _ = try await temp.store.apply(Fixtures.change(key: key, token: Fixtures.token(index), nonce: 2))
        }
        return temp
    }

    @Test func aBroadcastCommitsItemsPushesAndTheNonceTogether() async throws {
        let temp = try await Self.seeded(20)
        defer { Task { await temp.cleanUp() } }
        let draft = NotificationDraft(title: "All", body: "hands")
        guard
            case .accepted(let receipt) = try await temp.store.submit(
                Self.submission(draft.broadcastPayload(), nonce: 7))
        else {
            Issue.record("not accepted")
            return
        }
        #expect(receipt.sids.count == 20 && receipt.pushes == 20 && receipt.spam == 0)
        #expect(receipt.sids == Array(receipt.sids[0]...receipt.sids[0] + 19))
        #expect(try await temp.store.submit(Self.submission(draft.broadcastPayload(), nonce: 7)) == .replayed)
        let page = try await temp.store.feed(of: Self.subscriber(3).address, spam: false, limit: 10, offset: 0)
        #expect(page.total == 1)
        #expect(page.entries.first?.notification.app == "Desk")
        #expect(page.entries.first?.notification.epoch == 5_000)
        #expect(page.entries.first?.sender == Self.channel.address)
        #expect(try await temp.store.pushCounts() == ["queued": 20])
        let due = try await temp.store.duePushes(now: 1_000, limit: 100)
        #expect(due.count == 20)
        #expect(Set(due.map(\.apnsID)).count == 20, "each push has its own apns-id")
        #expect(due.allSatisfy { $0.notification?.title == "All" })
        #expect(try await temp.store.duePushes(now: 999, limit: 100).isEmpty, "not due before it was queued")
    }

    @Test func everythingSurvivesReopeningAndSidsAreNeverReused() async throws {
        let temp = try await Self.seeded(2)
        defer { Task { await temp.cleanUp() } }
        let draft = NotificationDraft(title: "t", body: "b")
        guard
            case .accepted(let first) = try await temp.store.submit(Self.submission(draft.broadcastPayload(), nonce: 1))
        else { return }
        try await temp.store.close()
        // Deleting the newest items (as an operator might) must not let their sids come back.
        let queue = try DatabaseQueue(path: temp.path)
        try await queue.write { db in try db.execute(sql: "DELETE FROM feed_items") }
        try queue.close()
        let reopened = try SQLiteHeraldStore(path: temp.path)
        #expect(try await reopened.submit(Self.submission(draft.broadcastPayload(), nonce: 1)) == .replayed)
        guard
            case .accepted(let second) = try await reopened.submit(Self.submission(draft.broadcastPayload(), nonce: 2))
        else { return }
        #expect(second.sids.min()! > first.sids.max()!)
        #expect(try await reopened.pushCounts()["queued"] == 4)
        try await reopened.close()
    }

    @Test func concurrentSendsWithOneNonceCommitOnce() async throws {
        let temp = try await Self.seeded(3)
        defer { Task { await temp.cleanUp() } }
        let submission = try Self.submission(
            NotificationDraft(title: "t", body: "b").targetedPayload(to: [Self.subscriber(0).address]), nonce: 99)
        let outcomes = try await withThrowingTaskGroup(of: NotificationOutcome.self) { group in
            for _ in 0..<16 { group.addTask { try await temp.store.submit(submission) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .replayed }.count == 15)
        #expect(try await temp.store.feed(of: Self.subscriber(0).address, spam: false, limit: 10, offset: 0).total == 1)
    }

    @Test func recordedResultsMoveAPushOutOfTheQueueOnce() async throws {
        let temp = try await Self.seeded(1)
        defer { Task { await temp.cleanUp() } }
        _ = try await temp.store.submit(
            Self.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 3))
        let push = try #require(try await temp.store.duePushes(now: 1_000, limit: 1).first)
        try await temp.store.record([PushAttemptResult(id: push.id, disposition: .retry(at: 1_050), error: "503")])
        #expect(try await temp.store.duePushes(now: 1_049, limit: 1).isEmpty)
        #expect(try await temp.store.duePushes(now: 1_050, limit: 1).first?.attempts == 1)
        try await temp.store.record([PushAttemptResult(id: push.id, disposition: .sent)])
        // A late duplicate result cannot bring a sent push back.
        try await temp.store.record([PushAttemptResult(id: push.id, disposition: .retry(at: 1_060))])
        #expect(try await temp.store.pushCounts() == ["sent": 1])
    }

    @Test func aClaimedPushIsNotClaimedAgainUntilItsLeasePassesOrItsOutcomeIsRecorded() async throws {
        let temp = try await Self.seeded(3)
        defer { Task { await temp.cleanUp() } }
        _ = try await temp.store.submit(
            Self.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 5))
        let store = temp.store
        let first = try await store.claimDuePushes(now: 1_000, limit: 2, platforms: nil, owner: "a", leaseUntil: 1_060)
        #expect(first.count == 2)
        let second = try await store.claimDuePushes(now: 1_001, limit: 5, platforms: nil, owner: "b", leaseUntil: 1_061)
        #expect(second.count == 1, "only the one unclaimed push")
        #expect(Set(first.map(\.id)).isDisjoint(with: second.map(\.id)))
        #expect(second.first?.notification?.title == "t", "a claim carries the content, as duePushes does")
        #expect(
            try await store.claimDuePushes(now: 1_059, limit: 5, platforms: nil, owner: "b", leaseUntil: 2_000).isEmpty)

        // An outcome ends the claim: a retry is claimable when due, whoever claimed it before.
        try await store.record([PushAttemptResult(id: first[0].id, disposition: .retry(at: 1_010))])
        let retried = try await store.claimDuePushes(
            now: 1_010, limit: 5, platforms: nil, owner: "b", leaseUntil: 1_070)
        #expect(retried.map(\.id) == [first[0].id] && retried.first?.attempts == 1)

        // A claim whose holder died lapses with its lease.
        let lapsed = try await store.claimDuePushes(now: 1_060, limit: 5, platforms: nil, owner: "b", leaseUntil: 1_120)
        #expect(lapsed.map(\.id) == [first[1].id])

        // The embedded store's server voids the claims of its earlier run at start.
        #expect(try await store.releaseClaims() == 3)
        #expect(
            try await store.claimDuePushes(now: 1_061, limit: 5, platforms: nil, owner: "c", leaseUntil: 1_200).count
                == 3)
    }

    @Test func claimsTakeOnlyTheirLanesPlatforms() async throws {
        let temp = try await Self.seeded(2)
        defer { Task { await temp.cleanUp() } }
        _ = try await temp.store.submit(
            Self.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 6))
        let android = try await temp.store.claimDuePushes(
            now: 1_000, limit: 10, platforms: [.android], owner: "a", leaseUntil: 1_060)
        #expect(android.isEmpty, "every binding here is ios")
        let ios = try await temp.store.claimDuePushes(
            now: 1_000, limit: 10, platforms: [.ios, .iosSandbox], owner: "a", leaseUntil: 1_060)
        #expect(ios.count == 2)
    }

    @Test func onlyFinishedPushesArePruned() async throws {
        let temp = try await Self.seeded(3)
        defer { Task { await temp.cleanUp() } }
        _ = try await temp.store.submit(
            Self.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 4))
        let due = try await temp.store.duePushes(now: 1_000, limit: 10)
        try await temp.store.record([
            PushAttemptResult(id: due[0].id, disposition: .sent),
            PushAttemptResult(id: due[1].id, disposition: .failed, error: "400"),
        ])
        #expect(try await temp.store.pruneFinishedPushes(queuedBefore: 1_000) == 0, "queued at 1000: not before")
        #expect(try await temp.store.pruneFinishedPushes(queuedBefore: 1_001) == 2)
        #expect(try await temp.store.pushCounts() == ["queued": 1], "a queued push stays, however old")
    }

    @Test func aRemovedChannelKeepsItsItemsButCannotSend() async throws {
        let temp = try await Self.seeded(1)
        defer { Task { await temp.cleanUp() } }
        let draft = NotificationDraft(title: "t", body: "b")
        _ = try await temp.store.submit(Self.submission(draft.broadcastPayload(), nonce: 1))
        #expect(try await temp.store.removeChannel(Self.channel.address))
        #expect(try await temp.store.submit(Self.submission(draft.broadcastPayload(), nonce: 2)) == .unknownChannel)
        #expect(try await temp.store.feed(of: Self.subscriber(0).address, spam: false, limit: 10, offset: 0).total == 1)
    }

    /// Reads must see every commit made before them: a statement left active on a reader connection
    /// once pinned that reader to an old snapshot.
    @Test func everyReadSeesTheLatestCommit() async throws {
        let temp = try await Self.seeded(1)
        defer { Task { await temp.cleanUp() } }
        let wallet = Self.subscriber(0).address
        for round in 1...6 {
            _ = try await temp.store.submit(
                Self.submission(
                    NotificationDraft(title: "r\(round)", body: "b").broadcastPayload(), nonce: UInt64(round)))
            let page = try await temp.store.feed(of: wallet, spam: false, limit: 1, offset: 0)
            #expect(page.total == round)
            #expect(page.entries.first?.notification.title == "r\(round)")
            #expect(try await temp.store.pushCounts()["queued"] == round)
            #expect(try await temp.store.queuedPushCount() == round)
            #expect(try await temp.store.duePushes(now: 1_000, limit: 100).count == round)
        }
    }
}
