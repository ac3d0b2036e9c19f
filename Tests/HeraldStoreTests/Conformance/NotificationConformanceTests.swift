import HeraldCore
import HeraldStore
import Testing

/// Notifications of types 1 to 4, spam, feeds and sids: the `HeraldStore` contract, on every backend.
@Suite struct NotificationConformanceTests {
    @Test(arguments: StoreBackend.available)
    func aBroadcastCommitsItemsPushesAndTheNonceTogether(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
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
    @Test(arguments: StoreBackend.available)
    func aSecretMessageIsGenericAndAStrangerGetsSpamWithoutPush(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
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

    /// Types 3 and 4 reach their named recipients only, one sid each in recipient order, every field as
    /// sent; a recipient who does not follow the channel gets the item as spam and no push.
    @Test(arguments: StoreBackend.available)
    func aTargetedOrSubsetMessageReachesOnlyItsRecipients(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 3)
            let (first, second) = (Fixtures.subscriber(0).address, Fixtures.subscriber(1).address)
            let stranger = Fixtures.subscriber(7).address
            let draft = NotificationDraft(
                title: "T", body: "B", subject: "S", message: "M", callToAction: "https://a.example",
                image: "https://i.example/x.png")
            let one = try await store.submit(Fixtures.submission(draft.targetedPayload(to: [second]), nonce: 3))
            guard case .accepted(let targeted) = one else {
                Issue.record("not accepted: \(one)")
                return
            }
            #expect(targeted.sids.count == 1 && targeted.pushes == 1 && targeted.spam == 0)
            let item = try #require(try await store.feed(of: second, spam: false, limit: 5, offset: 0).entries.first)
            #expect(
                item.notification
                    == DeliveredNotification(
                        kind: .targeted, sid: targeted.sids[0], epoch: 5_000, title: "T", body: "B", app: "Desk",
                        icon: "i", url: "u", secret: "", subject: "S", message: "M",
                        callToAction: "https://a.example", image: "https://i.example/x.png"))
            #expect(try await store.feed(of: first, spam: false, limit: 5, offset: 0).total == 0)

            let several = try await store.submit(
                Fixtures.submission(draft.targetedPayload(to: [second, stranger, first]), nonce: 4))
            guard case .accepted(let subset) = several else {
                Issue.record("not accepted: \(several)")
                return
            }
            #expect(subset.sids.count == 3 && subset.spam == 1 && subset.pushes == 2)
            var recipients: [EthereumAddress] = []
            for sid in subset.sids { recipients.append(try #require(try await store.pushReport(sid: sid)).recipient) }
            #expect(recipients == [second, stranger, first], "one sid per recipient, in recipient order")
            #expect(try await store.pushReport(sid: subset.sids[1])?.pushes == [], "no push for spam")
            let firstItem = try #require(
                try await store.feed(of: first, spam: false, limit: 5, offset: 0).entries.first)
            #expect(firstItem.notification.kind == .subset && firstItem.notification.sid == subset.sids[2])
            #expect(try await store.feed(of: stranger, spam: false, limit: 5, offset: 0).total == 0)
            #expect(try await store.feed(of: stranger, spam: true, limit: 5, offset: 0).total == 1)
            #expect(try await store.feed(of: second, spam: false, limit: 5, offset: 0).total == 2)
            let due = try await store.duePushes(now: 1_000, limit: 10)
            #expect(due.count == 3 && due.filter { $0.wallet == second }.count == 2)
            #expect(due.filter { $0.wallet == first }.count == 1)
        }
    }

    @Test(arguments: StoreBackend.available)
    func everythingSurvivesReopeningAndSidsAreNeverReused(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let store = try await database.openStore()
            try await Fixtures.seed(store, subscribers: 2)
            let draft = NotificationDraft(title: "t", body: "b")
            guard
                case .accepted(let first) = try await store.submit(
                    Fixtures.submission(draft.broadcastPayload(), nonce: 1))
            else { throw StoreError("not accepted") }
            try await store.close()
            // Deleting the newest items (as an operator might) must not let their sids come back.
            try await database.execute("DELETE FROM feed_items")
            let reopened = try await database.openStore()
            #expect(try await reopened.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 1)) == .replayed)
            guard
                case .accepted(let second) = try await reopened.submit(
                    Fixtures.submission(draft.broadcastPayload(), nonce: 2))
            else { throw StoreError("not accepted") }
            #expect(try #require(second.sids.min()) > (try #require(first.sids.max())))
            #expect(try await reopened.pushCounts()["queued"] == 4)
        }
    }

    @Test(arguments: StoreBackend.available)
    func concurrentSendsWithOneNonceCommitOnce(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 3)
            let submission = try Fixtures.submission(
                NotificationDraft(title: "t", body: "b").targetedPayload(to: [Fixtures.subscriber(0).address]),
                nonce: 99)
            let outcomes = try await withThrowingTaskGroup(of: NotificationOutcome.self) { group in
                for _ in 0..<16 { group.addTask { try await store.submit(submission) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // One applies; the 15 others get its answer (docs/protocol.md §11.2).
            let applied = outcomes.filter { if case .accepted = $0 { true } else { false } }
            #expect(applied.count == 1)
            let first = try #require(applied.first)
            #expect(outcomes.filter { $0 == .repeated(first) }.count == 15)
            // Another send with that nonce is a replay.
            let other = try Fixtures.submission(
                NotificationDraft(title: "other", body: "b").targetedPayload(to: [Fixtures.subscriber(1).address]),
                nonce: 99)
            #expect(try await store.submit(other) == .replayed)
            #expect(
                try await store.feed(of: Fixtures.subscriber(0).address, spam: false, limit: 10, offset: 0).total == 1)
            #expect(
                try await store.feed(of: Fixtures.subscriber(1).address, spam: false, limit: 10, offset: 0).total == 0)
            #expect(try await store.pushCounts()["queued"] == 1)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aRemovedChannelKeepsItsItemsButCannotSend(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
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

    /// Reads see every commit made before them (a statement left active on a SQLite reader once pinned it
    /// to an old snapshot), and pages come newest first with the whole set's size.
    @Test(arguments: StoreBackend.available)
    func everyReadSeesTheLatestCommitAndFeedsPageNewestFirst(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
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
