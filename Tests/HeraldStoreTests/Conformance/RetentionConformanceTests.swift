import HeraldCore
import HeraldStore
import Testing

/// Retention (CLI.md `retention.*`, `bindingExpiryDays`): what is deleted, what is kept, on every
/// backend. Time is the tests' own: item epochs and key times are given, and so are the cutoffs.
@Suite struct RetentionConformanceTests {
    /// Items of notifications sent before the cutoff go, and the notification with them; an item whose
    /// push is still queued stays until the push is finished.
    @Test(arguments: StoreBackend.available)
    func oldItemsGoWithTheirNotificationOnceTheirPushesAreFinished(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let store = try await database.openStore()
            try await Fixtures.seed(store, subscribers: 2)
            let draft = NotificationDraft(title: "t", body: "b")
            let old = try await Self.sids(
                store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 3, epoch: 1_000)))
            let new = try await Self.sids(
                store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 4, epoch: 9_000)))
            #expect(try await store.pruneFeedItems(sentBefore: 5_000) == RetentionCount(), "pushes still queued")
            let due = try await store.duePushes(now: 1_000, limit: 10)
            try await store.record(
                due.filter { old.contains($0.sid ?? -1) }.map { PushAttemptResult(id: $0.id, disposition: .sent) })
            #expect(try await store.pruneFeedItems(sentBefore: 5_000) == RetentionCount(feedItems: 2, notifications: 1))
            let feed = try await store.feed(of: Fixtures.subscriber(0).address, spam: false, limit: 10, offset: 0)
            #expect(feed.total == 1 && feed.entries.allSatisfy { new.contains($0.notification.sid) })
            #expect(try await store.pushReport(sid: old[0]) == nil)
            #expect(try await database.integers("SELECT count(*) FROM notifications") == [1])
            #expect(try await store.pruneFeedItems(sentBefore: 5_000) == RetentionCount(), "nothing left to prune")
        }
    }

    /// A wallet keeps its newest items up to the limit; the notifications of the older ones go with them.
    @Test(arguments: StoreBackend.available)
    func aWalletKeepsOnlyItsNewestItems(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let store = try await database.openStore()
            try await store.saveChannel(
                ChannelRecord(address: Fixtures.other.address, name: "Desk", icon: "i", url: "u", createdAt: 1))
            // No binding: no push holds the items back. Not subscribed: the items are spam.
            let wallet = Fixtures.subscriber(5).address
            var sids: [Int64] = []
            for nonce in 1...5 {
                let payload = NotificationDraft(title: "t\(nonce)", body: "b").targetedPayload(to: [wallet])
                sids += try await Self.sids(store.submit(Fixtures.submission(payload, nonce: UInt64(nonce))))
            }
            let trim = try await store.pruneFeedItems(beyondNewest: 2, receivedAfter: 0, limit: 100)
            #expect(trim == FeedTrim(deleted: RetentionCount(feedItems: 3, notifications: 3), examinedThrough: sids[4]))
            let feed = try await store.feed(of: wallet, spam: true, limit: 10, offset: 0)
            #expect(feed.entries.map(\.notification.sid) == [sids[4], sids[3]])
            #expect(try await database.integers("SELECT count(*) FROM notifications") == [2])
            let again = try await store.pruneFeedItems(beyondNewest: 2, receivedAfter: trim.examinedThrough, limit: 100)
            #expect(again == FeedTrim(deleted: RetentionCount(), examinedThrough: sids[4]), "nothing new to look at")
        }
    }

    /// A key goes when its wallet holds nothing (no binding, subscription, item or channel) and it was
    /// stored before the cutoff; the wallet's next signature stores it again.
    @Test(arguments: StoreBackend.available)
    func idleWalletsLoseTheirKeyAndGetItBackWhenTheySignAgain(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let store = try await database.openStore()
            try await Fixtures.seed(store, subscribers: 1)  // keys at 900, a binding and a subscription
            let idle = Fixtures.subscriber(10)
            let recent = Fixtures.subscriber(11)
            let withItem = Fixtures.subscriber(12)
            try await store.rememberPublicKey(idle.publicKey, of: idle.address, now: 100)
            try await store.rememberPublicKey(recent.publicKey, of: recent.address, now: 2_000)
            try await store.rememberPublicKey(withItem.publicKey, of: withItem.address, now: 100)
            let payload = NotificationDraft(title: "t", body: "b").targetedPayload(to: [withItem.address])
            _ = try await store.submit(Fixtures.submission(payload, nonce: 5))
            #expect(try await store.pruneWalletKeys(storedBefore: 950) == 1)
            #expect(try await store.publicKey(of: idle.address) == nil)
            for kept in [recent, withItem, Fixtures.subscriber(0), Fixtures.other] {
                #expect(try await store.publicKey(of: kept.address) == kept.publicKey)
            }
            try await store.rememberPublicKey(idle.publicKey, of: idle.address, now: 3_000)
            #expect(try await store.publicKey(of: idle.address) == idle.publicKey)
            #expect(try await store.pruneWalletKeys(storedBefore: 950) == 0)
        }
    }

    /// A wallet's unread number (feeds, badges, read marks: docs/protocol.md §10) loses the unread items
    /// retention deletes that are not spam, and only those: a read item or a spam one changes nothing.
    @Test(arguments: StoreBackend.available)
    func theUnreadNumberLosesOnlyTheUnreadItemsDeleted(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let store = try await database.openStore()
            try await store.saveChannel(
                ChannelRecord(address: Fixtures.other.address, name: "Desk", icon: "i", url: "u", createdAt: 1))
            // No binding: no push holds an item back. The stranger is not subscribed: its item is spam.
            let reader = Fixtures.subscriber(7)
            let stranger = Fixtures.subscriber(8).address
            _ = try await store.apply(Fixtures.subscription(key: reader, nonce: 1))
            let draft = NotificationDraft(title: "t", body: "b")
            var sids: [Int64] = []
            for nonce in 2...6 {
                sids += try await Self.sids(
                    store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: UInt64(nonce))))
            }
            let both = draft.targetedPayload(to: [reader.address, stranger])
            sids += try await Self.sids(store.submit(Fixtures.submission(both, nonce: 7))).prefix(1)
            #expect(try await store.feed(of: reader.address, spam: false, limit: 10, offset: 0).unread == 6)
            #expect(
                try await store.apply(Fixtures.readMark(reader, sids: [sids[0]], nonce: 8))
                    == .marked(unread: 5, pushes: 0))
            // The four oldest go: one read, three unread.
            _ = try await store.pruneFeedItems(beyondNewest: 2, receivedAfter: 0, limit: 100)
            let feed = try await store.feed(of: reader.address, spam: false, limit: 10, offset: 0)
            #expect(feed.entries.map(\.notification.sid) == [sids[5], sids[4]])
            #expect(feed.unread == 2 && feed.entries.allSatisfy { !$0.read })
            #expect(try await store.feed(of: stranger, spam: true, limit: 10, offset: 0).total == 1)
            #expect(try await store.feed(of: stranger, spam: false, limit: 10, offset: 0).unread == 0)
            #expect(
                try await store.apply(Fixtures.readMark(reader, upTo: sids[5], nonce: 9))
                    == .marked(unread: 0, pushes: 0))
        }
    }

    private static func sids(_ outcome: NotificationOutcome) throws -> [Int64] {
        guard case .accepted(let receipt) = outcome else { throw StoreError("not accepted: \(outcome)") }
        return receipt.sids
    }
}
