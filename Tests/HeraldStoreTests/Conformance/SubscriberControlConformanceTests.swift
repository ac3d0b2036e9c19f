import HeraldCore
import HeraldStore
import Testing

/// docs/protocol.md §10 on every backend: settings and choices, the filter a send names, mutes, buckets,
/// read state and its pushes. Each rule is decided by the planners once; these check that each backend
/// reads and writes what they decide.
@Suite struct SubscriberControlConformanceTests {
    static let list = """
        [{"id":"trades","kind":"toggle","default":true},\
        {"id":"min_usd","kind":"threshold","min":0,"max":1000,"default":100}]
        """
    static let unlimited = DeliveryPolicy.unlimited

    /// The payload with a top-level `"setting"`.
    static func naming(_ setting: String, in payload: String) -> String {
        String(payload.dropLast()) + #","setting":\#(setting)}"#
    }

    static func receipt(_ outcome: NotificationOutcome) throws -> NotificationReceipt {
        guard case .accepted(let receipt) = outcome else { throw StoreError("not accepted: \(outcome)") }
        return receipt
    }

    @Test(arguments: StoreBackend.available)
    func aNewListKeepsOnlyTheChoicesItStillAllows(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 1)
            let subscriber = Fixtures.subscriber(0)
            #expect(try await store.channelSettings(of: Fixtures.other.address) == .empty)
            #expect(try await store.channelSettings(of: subscriber.address) == nil)
            let saved = try await store.apply(Fixtures.channelSettings(Self.list, nonce: 10))
            #expect(saved == .saved(try ChannelSettingsList.parse(Self.list)))
            #expect(try await store.apply(Fixtures.channelSettings("[]", nonce: 10)) == .replayed)
            let chosen = try await store.apply(
                Fixtures.choices(#"{"trades":false,"min_usd":700}"#, of: subscriber, nonce: 11))
            guard case .saved(let effective) = chosen else { throw StoreError("not saved: \(chosen)") }
            #expect(effective.map(\.value) == [0, 700])
            // min_usd's range shrinks below 700 and trades becomes a threshold: both choices go.
            _ = try await store.apply(
                Fixtures.channelSettings(
                    #"[{"id":"trades","kind":"threshold","min":0,"max":5,"default":1},{"id":"min_usd","kind":"threshold","min":0,"max":500,"default":50}]"#,
                    nonce: 12))
            let listed = try #require(try await store.subscriptions(of: subscriber.address).first)
            #expect(listed.settings.map(\.value) == [1, 50])
            // A range that still holds the choice keeps it.
            _ = try await store.apply(Fixtures.choices(#"{"min_usd":300}"#, of: subscriber, nonce: 13))
            _ = try await store.apply(
                Fixtures.channelSettings(
                    #"[{"id":"min_usd","kind":"threshold","min":-5,"max":400,"default":0}]"#, nonce: 14))
            #expect(try await store.subscriptions(of: subscriber.address).first?.settings.map(\.value) == [300])
        }
    }

    @Test(arguments: StoreBackend.available)
    func refusalsSpendNoNonceAndChangeNothing(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 1)
            let subscriber = Fixtures.subscriber(0)
            let stranger = Fixtures.subscriber(5)
            // An unknown channel: ChannelSettings signed by a wallet that is none.
            let foreign = ChannelSettingsChange(
                channel: stranger.address, list: .empty, signed: Fixtures.signed(stranger, nonce: 20))
            #expect(try await store.apply(foreign) == .unknownChannel)
            _ = try await store.apply(Fixtures.channelSettings(Self.list, nonce: 20))
            #expect(try await store.apply(Fixtures.choices("{}", of: stranger, nonce: 21)) == .notSubscribed)
            let invalid = try await store.apply(Fixtures.choices(#"{"min_usd":5000}"#, of: subscriber, nonce: 22))
            guard case .refused(let rejection) = invalid else { throw StoreError("not refused: \(invalid)") }
            #expect(rejection.code == .invalidSettings)
            #expect(try await store.apply(Fixtures.mute(stranger, until: 2_000, nonce: 23)) == .notSubscribed)
            #expect(try await store.apply(Fixtures.mute(subscriber, until: 1_000, nonce: 24)) == .outOfRange)
            #expect(
                try await store.apply(Fixtures.mute(subscriber, until: 1_000 + Mute.maximumSeconds + 1, nonce: 24))
                    == .outOfRange)
            // Every refused nonce is still fresh.
            #expect(try await store.apply(Fixtures.choices("{}", of: subscriber, nonce: 22)) != .replayed)
            #expect(try await store.apply(Fixtures.mute(subscriber, until: 2_000, nonce: 24)) == .muted(until: 2_000))
            #expect(try await store.apply(Fixtures.mute(subscriber, until: 0, nonce: 24)) == .replayed)
            let refusedSend = try await store.submit(
                Fixtures.submission(
                    Self.naming(#"{"id":"nope"}"#, in: NotificationDraft(title: "t", body: "b").broadcastPayload()),
                    nonce: 25))
            guard case .refusedSetting(let why) = refusedSend else { throw StoreError("not refused: \(refusedSend)") }
            #expect(why.code == .invalidPayload)
            #expect(
                try await store.submit(
                    Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 25))
                    != .replayed)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aSettingFiltersSubscribersOfEveryTypeButNeverSpam(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 4)
            _ = try await store.apply(Fixtures.channelSettings(Self.list, nonce: 30))
            let (off, high, plain, low) = (
                Fixtures.subscriber(0), Fixtures.subscriber(1), Fixtures.subscriber(2), Fixtures.subscriber(3)
            )
            _ = try await store.apply(Fixtures.choices(#"{"trades":false}"#, of: off, nonce: 31))
            _ = try await store.apply(Fixtures.choices(#"{"min_usd":900}"#, of: high, nonce: 31))
            _ = try await store.apply(Fixtures.choices(#"{"min_usd":10}"#, of: low, nonce: 31))
            let stranger = Fixtures.subscriber(9).address
            let draft = NotificationDraft(title: "t", body: "b")
            let toggled = try Self.receipt(
                try await store.submit(
                    Fixtures.submission(Self.naming(#"{"id":"trades"}"#, in: draft.broadcastPayload()), nonce: 32)))
            #expect(toggled.filtered == 1 && toggled.sids.count == 3 && toggled.pushes == 3)
            // A threshold passes choices at or below the value: default 100, 10 pass 100; 900 does not.
            let named = [off.address, high.address, plain.address, low.address, stranger]
            let threshold = try Self.receipt(
                try await store.submit(
                    Fixtures.submission(
                        Self.naming(#"{"id":"min_usd","value":100}"#, in: draft.targetedPayload(to: named)), nonce: 33))
            )
            #expect(
                threshold.filtered == 1 && threshold.sids.count == 4 && threshold.spam == 1 && threshold.pushes == 3)
            #expect(try await store.feed(of: high.address, spam: false, limit: 10, offset: 0).total == 1)
            #expect(try await store.feed(of: off.address, spam: false, limit: 10, offset: 0).total == 1)
            #expect(try await store.feed(of: stranger, spam: true, limit: 10, offset: 0).total == 1)
            let broadcastThreshold = try Self.receipt(
                try await store.submit(
                    Fixtures.submission(
                        Self.naming(#"{"id":"min_usd","value":50}"#, in: draft.broadcastPayload()), nonce: 34)))
            #expect(broadcastThreshold.filtered == 3 && broadcastThreshold.sids.count == 1)
            #expect(try await store.feed(of: low.address, spam: false, limit: 10, offset: 0).total == 3)
        }
    }

    /// A mute stores items and queues no push while it lasts, and lapses by time alone (the injected clock).
    @Test(arguments: StoreBackend.available)
    func aMuteStopsPushesUntilItLapses(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 2)
            let (muted, other) = (Fixtures.subscriber(0), Fixtures.subscriber(1))
            #expect(try await store.apply(Fixtures.mute(muted, until: 2_000, nonce: 40)) == .muted(until: 2_000))
            let draft = NotificationDraft(title: "t", body: "b")
            let broadcast = try Self.receipt(
                try await store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 41, now: 1_500)))
            #expect(broadcast.sids.count == 2 && broadcast.pushes == 1 && broadcast.muted == 1)
            let targeted = try Self.receipt(
                try await store.submit(
                    Fixtures.submission(
                        draft.targetedPayload(to: [muted.address, other.address]), nonce: 42, now: 1_999)))
            #expect(targeted.sids.count == 2 && targeted.pushes == 1 && targeted.muted == 1)
            #expect(try await store.feed(of: muted.address, spam: false, limit: 10, offset: 0).total == 2)
            let record = try #require(try await store.subscriptions(of: muted.address).first)
            #expect(record.mutedUntil(at: 1_999) == 2_000 && record.mutedUntil(at: 2_000) == 0)
            let lapsed = try Self.receipt(
                try await store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: 43, now: 2_000)))
            #expect(lapsed.pushes == 2 && lapsed.muted == 0)
            // Unsubscribing drops the mute (and the choices): a new subscription starts clear.
            _ = try await store.apply(Fixtures.subscription(.unsubscribe, key: muted, nonce: 44))
            _ = try await store.apply(Fixtures.mute(other, until: 9_000, nonce: 45))
            _ = try await store.apply(Fixtures.subscription(key: muted, nonce: 46))
            #expect(try await store.subscriptions(of: muted.address).first?.storedMutedUntil == 0)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aRecipientsBucketThrottlesWhatItCannotHold(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 2)
            let policy = DeliveryPolicy(channelWalletPerHour: 60, channelWalletBurst: 2, channelBroadcastsPerHour: 0)
            let (first, second) = (Fixtures.subscriber(0).address, Fixtures.subscriber(1).address)
            let stranger = Fixtures.subscriber(9).address
            let draft = NotificationDraft(title: "t", body: "b")
            func send(_ to: [EthereumAddress], nonce: UInt64, epoch: Int64 = 5_000) async throws -> NotificationReceipt
            {
                try Self.receipt(
                    try await store.submit(
                        Fixtures.submission(draft.targetedPayload(to: to), nonce: nonce, epoch: epoch, policy: policy)))
            }
            _ = try await send([first, stranger], nonce: 50)
            _ = try await send([first], nonce: 51)
            let third = try await send([second, first, stranger], nonce: 52)
            #expect(third.throttled == [first] && third.sids.count == 2 && third.pushes == 1 && third.spam == 1)
            #expect(try await send([stranger], nonce: 56).throttled == [stranger], "spam takes tokens too")
            // One token a minute comes back.
            let later = try await send([first, stranger], nonce: 53, epoch: 5_000 + 60_000)
            #expect(later.throttled == [] && later.sids.count == 2)
            #expect(try await send([first], nonce: 54, epoch: 5_000 + 60_000).throttled == [first])
            // Broadcasts take no per-wallet token.
            let broadcast = try Self.receipt(
                try await store.submit(
                    Fixtures.submission(draft.broadcastPayload(), nonce: 55, epoch: 5_000 + 60_000, policy: policy)))
            #expect(broadcast.sids.count == 2 && broadcast.throttled.isEmpty)
        }
    }

    /// Buckets full again are pruned, and pruning gives no recipient a token it did not have: a bucket
    /// still filling stays, with what it holds.
    @Test(arguments: StoreBackend.available)
    func bucketsFullAgainArePrunedAndNoOtherIs(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let store = try await database.openStore()
            try await Fixtures.seed(store, subscribers: 2)
            // One token a minute, two at most.
            let policy = DeliveryPolicy(channelWalletPerHour: 60, channelWalletBurst: 2, channelBroadcastsPerHour: 0)
            let (first, second) = (Fixtures.subscriber(0).address, Fixtures.subscriber(1).address)
            let draft = NotificationDraft(title: "t", body: "b")
            func send(_ to: [EthereumAddress], nonce: UInt64, epoch: Int64) async throws -> NotificationReceipt {
                try Self.receipt(
                    try await store.submit(
                        Fixtures.submission(draft.targetedPayload(to: to), nonce: nonce, epoch: epoch, policy: policy)))
            }
            _ = try await send([first], nonce: 70, epoch: 5_000)  // full again at 65,000
            _ = try await send([second], nonce: 71, epoch: 100_000)
            _ = try await send([second], nonce: 72, epoch: 100_000)  // empty; full again at 220,000
            #expect(try await database.integers("SELECT count(*) FROM wallet_buckets") == [2])
            #expect(try await store.pruneWalletBuckets(fullBefore: 65_000) == 0, "full at 65,000, not before")
            #expect(try await store.pruneWalletBuckets(fullBefore: 130_000) == 1)
            #expect(try await database.integers("SELECT count(*) FROM wallet_buckets") == [1])
            // The second wallet's bucket still holds nothing at 130,000: pruning gave it no token.
            #expect(try await send([second], nonce: 73, epoch: 130_000).throttled == [second])
            #expect(try await send([first], nonce: 74, epoch: 130_000).throttled == [])
        }
    }

    /// An empty broadcast bucket refuses the whole broadcast, spends no nonce, and says when one fits.
    @Test(arguments: StoreBackend.available)
    func anEmptyBroadcastBucketRefusesTheWholeBroadcast(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 2)
            let policy = DeliveryPolicy(channelWalletPerHour: 0, channelWalletBurst: 0, channelBroadcastsPerHour: 2)
            let payload = NotificationDraft(title: "t", body: "b").broadcastPayload()
            for nonce in 60...61 {
                _ = try Self.receipt(
                    try await store.submit(Fixtures.submission(payload, nonce: UInt64(nonce), policy: policy)))
            }
            let refused = try await store.submit(Fixtures.submission(payload, nonce: 62, policy: policy))
            #expect(refused == .broadcastLimited(retryAfter: 1_800))
            #expect(
                try await store.feed(of: Fixtures.subscriber(0).address, spam: false, limit: 10, offset: 0).total == 2)
            // Half an hour later, the same envelope fits.
            let again = try await store.submit(
                Fixtures.submission(payload, nonce: 62, epoch: 5_000 + 1_800_000, policy: policy))
            #expect(try Self.receipt(again).sids.count == 2)
        }
    }

    /// Several nodes take from the same buckets: sends racing on two stores of one database never take
    /// more than a bucket holds.
    @Test(arguments: StoreBackend.available)
    func twoNodesTakeFromOneBucket(_ backend: StoreBackend) async throws {
        try await backend.withDatabase { database in
            let (one, two) = (try await database.openStore(), try await database.openStore())
            try await Fixtures.seed(one, subscribers: 1)
            let wallet = Fixtures.subscriber(0).address
            let policy = DeliveryPolicy(channelWalletPerHour: 1, channelWalletBurst: 5, channelBroadcastsPerHour: 0)
            let payload = NotificationDraft(title: "t", body: "b").targetedPayload(to: [wallet])
            let stores = [one, two]
            let stored = try await withThrowingTaskGroup(of: Int.self) { group in
                for nonce in 0..<20 {
                    let store = stores[nonce % 2]
                    group.addTask {
                        try Self.receipt(
                            try await store.submit(
                                Fixtures.submission(payload, nonce: UInt64(100 + nonce), policy: policy))
                        ).sids.count
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(stored == 5)
            #expect(try await two.feed(of: wallet, spam: false, limit: 50, offset: 0).total == 5)
        }
    }

    /// A broadcast's badges are each recipient's own number with its item: a wallet's earlier unread items
    /// count, its spam and read items do not, and several broadcasts in turn add one each. The number is kept
    /// per wallet on both backends (PostgreSQL counted every wallet's unread items for each push before).
    @Test(arguments: StoreBackend.available)
    func aBroadcastsBadgesAreEachRecipientsOwnNumber(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 3)
            let (busy, idle, reader) = (Fixtures.subscriber(0), Fixtures.subscriber(1), Fixtures.subscriber(2))
            let stranger = Fixtures.subscriber(9)
            _ = try await store.apply(Fixtures.change(key: stranger, token: Fixtures.token(9), nonce: 1))
            let draft = NotificationDraft(title: "t", body: "b")
            // busy: two unread items; reader: one, then read; stranger: one item, as spam.
            _ = try await store.submit(Fixtures.submission(draft.targetedPayload(to: [busy.address]), nonce: 10))
            _ = try await store.submit(
                Fixtures.submission(
                    draft.targetedPayload(to: [busy.address, reader.address, stranger.address]), nonce: 11))
            _ = try await store.apply(Fixtures.readMark(reader, upTo: 9_999_999, nonce: 12))
            var previous = Set(try await store.duePushes(now: 1_000, limit: 100).map(\.id))
            for (round, nonce) in [(1, UInt64(13)), (2, UInt64(14))] {
                _ = try Self.receipt(
                    try await store.submit(Fixtures.submission(draft.broadcastPayload(), nonce: nonce)))
                let queued = try await store.duePushes(now: 1_000, limit: 100).filter { !previous.contains($0.id) }
                previous.formUnion(queued.map(\.id))
                let badges = Dictionary(queued.map { ($0.wallet, $0.badge) }, uniquingKeysWith: { first, _ in first })
                #expect(badges[busy.address] == 2 + round, "round \(round)")
                #expect(badges[idle.address] == round, "round \(round)")
                #expect(badges[reader.address] == round, "round \(round)")
                #expect(badges[stranger.address] == nil, "the stranger follows nothing: no broadcast")
            }
            #expect(try await store.feed(of: busy.address, spam: false, limit: 10, offset: 0).unread == 4)
            #expect(try await store.feed(of: reader.address, spam: false, limit: 10, offset: 0).unread == 2)
            #expect(try await store.feed(of: stranger.address, spam: true, limit: 10, offset: 0).unread == 0)
            #expect(
                try await store.apply(Fixtures.readMark(busy, upTo: 9_999_999, nonce: 15))
                    == .marked(unread: 0, pushes: 1))
        }
    }

    @Test(arguments: StoreBackend.available)
    func readMarksCountUnreadAndQueueReadSyncPushes(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            try await Fixtures.seed(store, subscribers: 1)
            let reader = Fixtures.subscriber(0)
            // A second device on Android and a browser: the Android one gets a read message, the browser nothing.
            _ = try await store.apply(
                Fixtures.change(key: reader, token: String(repeating: "A", count: 40), platform: .android, nonce: 70))
            let draft = NotificationDraft(title: "t", body: "b")
            var sids: [Int64] = []
            for nonce in 71...73 {
                sids += try Self.receipt(
                    try await store.submit(
                        Fixtures.submission(draft.targetedPayload(to: [reader.address]), nonce: UInt64(nonce)))
                ).sids
            }
            // The APNs pushes carry the unread count with their own item: 1, 2, 3.
            let queued = try await store.duePushes(now: 1_000, limit: 20)
            #expect(queued.filter { $0.platform == .ios }.map(\.badge) == [1, 2, 3])
            #expect(queued.filter { $0.platform == .android }.allSatisfy { $0.badge == nil })
            #expect(try await store.feed(of: reader.address, spam: false, limit: 10, offset: 0).unread == 3)
            let marked = try await store.apply(Fixtures.readMark(reader, sids: [sids[1], 999_999], nonce: 74))
            #expect(marked == .marked(unread: 2, pushes: 2))
            let page = try await store.feed(of: reader.address, spam: false, limit: 10, offset: 0)
            #expect(page.unread == 2 && page.entries.map(\.read) == [false, true, false])
            #expect(try await store.subscriptions(of: reader.address).first?.unread == 2)
            let sync = try await store.duePushes(now: 1_000, limit: 50).filter(\.readSync)
            #expect(Set(sync.map(\.platform)) == [.ios, .android] && sync.allSatisfy { $0.badge == 2 })
            // Nothing changed: no pushes. Then everything up to the last: one newer push per binding replaces the older.
            #expect(
                try await store.apply(Fixtures.readMark(reader, sids: [sids[1]], nonce: 75))
                    == .marked(unread: 2, pushes: 0))
            #expect(
                try await store.apply(Fixtures.readMark(reader, upTo: sids[2], nonce: 76))
                    == .marked(unread: 0, pushes: 2))
            let replaced = try await store.duePushes(now: 1_000, limit: 50).filter(\.readSync)
            #expect(replaced.count == 2 && replaced.allSatisfy { $0.badge == 0 })
            #expect(try await store.apply(Fixtures.readMark(reader, upTo: 1, nonce: 76)) == .replayed)
            // Without read sync, a mark queues nothing.
            _ = try await store.submit(Fixtures.submission(draft.targetedPayload(to: [reader.address]), nonce: 77))
            let quiet = DeliveryPolicy(readSync: false)
            #expect(
                try await store.apply(Fixtures.readMark(reader, upTo: 9_999_999, nonce: 78, policy: quiet))
                    == .marked(unread: 0, pushes: 0))
        }
    }
}
