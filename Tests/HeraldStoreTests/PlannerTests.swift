import HeraldCore
import Testing

@testable import HeraldStore

/// The rules of docs/protocol.md §4, decided once above the backends: each planner alone, without a
/// database. The conformance suite checks that both backends write what the plans say.
@Suite struct PlannerTests {
    private static let desk = ChannelRecord(
        address: Fixtures.other.address, name: "Desk", icon: "i", url: "u", createdAt: 1)

    @Test func aRegisterRefreshesAnExistingBindingEvenAtTheLimit() {
        let change = Fixtures.change(nonce: 1, max: 2, confirm: true)
        #expect(
            DeviceChangePlanner.plan(change, facts: BindingFacts(exists: true, walletBindings: 2))
                == .refresh(webPush: nil))
    }

    @Test func aNewBindingIsCreatedBelowTheLimitAndRefusedAtIt() {
        let change = Fixtures.change(nonce: 1, max: 2, confirm: true)
        #expect(
            DeviceChangePlanner.plan(change, facts: BindingFacts(exists: false, walletBindings: 1))
                == .create(webPush: nil, confirm: true))
        #expect(
            DeviceChangePlanner.plan(change, facts: BindingFacts(exists: false, walletBindings: 2)) == .refuseOverLimit)
        let quiet = Fixtures.change(nonce: 1, max: 2, confirm: false)
        #expect(
            DeviceChangePlanner.plan(quiet, facts: BindingFacts(exists: false, walletBindings: 0))
                == .create(webPush: nil, confirm: false))
    }

    @Test func anUnregisterRemovesWhateverTheFacts() {
        let change = Fixtures.change(.unregister, nonce: 1, max: 0)
        #expect(DeviceChangePlanner.plan(change, facts: BindingFacts(exists: false, walletBindings: 9)) == .remove)
    }

    @Test func aSubscriptionToAnUnknownChannelIsRefused() {
        let subscribe = Fixtures.subscription(key: Fixtures.key, nonce: 1)
        #expect(SubscriptionChangePlanner.plan(subscribe, channelExists: false) == .refuseUnknownChannel)
        #expect(SubscriptionChangePlanner.plan(subscribe, channelExists: true) == .subscribe)
        let unsubscribe = Fixtures.subscription(.unsubscribe, key: Fixtures.key, nonce: 1)
        #expect(SubscriptionChangePlanner.plan(unsubscribe, channelExists: true) == .unsubscribe)
    }

    @Test func aNotificationFromNoChannelIsRefused() throws {
        let submission = try Fixtures.submission(NotificationDraft(title: "t", body: "b").broadcastPayload(), nonce: 1)
        #expect(
            NotificationPlanner.plan(submission, facts: NotificationFacts(channel: nil, followers: []))
                == .refuseUnknownChannel)
    }

    @Test func aBroadcastGoesToEverySubscriberWithTheChannelsOwnText() throws {
        let submission = try Fixtures.submission(
            NotificationDraft(title: "All", body: "hands").broadcastPayload(), nonce: 1)
        let plan = NotificationPlanner.plan(submission, facts: NotificationFacts(channel: Self.desk, followers: []))
        guard case .deliver(let delivery) = plan else {
            Issue.record("refused: \(plan)")
            return
        }
        let stored = delivery.stored
        #expect(delivery.recipients == .everySubscriber(BroadcastRules(filter: nil, mutedAt: 1_000)))
        #expect(
            delivery.buckets.broadcast == Int64(305_000), "12 an hour: one token every five minutes: 5,000 + 300,000 ms"
        )
        #expect(stored.title == "All" && stored.body == "hands" && stored.app == "Desk" && stored.type == 1)
        #expect(stored.icon == "i" && stored.url == "u" && stored.epoch == 5_000)
    }

    /// Type 2: generic text; a named recipient who does not follow the channel is spam and not pushed;
    /// secrets are kept lowercase.
    @Test func aSecretMessageIsGenericAndOnlyFollowersArePushed() throws {
        let follower = Fixtures.subscriber(0).address
        let stranger = Fixtures.subscriber(1).address
        let secret = String(repeating: "AB", count: 97)
        let payload = """
            {"notification":{"title":"Private","body":"text"},"data":{"type":"2"},
             "recipients":{"\(follower.lowercased)":{"secret":"\(secret)"},"\(stranger.lowercased)":{"secret":"\(secret)"}}}
            """
        let submission = try Fixtures.submission(payload, nonce: 1)
        let plan = NotificationPlanner.plan(
            submission, facts: NotificationFacts(channel: Self.desk, followers: [follower]))
        guard case .deliver(let delivery) = plan, case .named(let items, _, _) = delivery.recipients else {
            Issue.record("not named: \(plan)")
            return
        }
        let stored = delivery.stored
        #expect(stored.title == DeliveredNotification.secretTitle(app: "Desk"))
        #expect(stored.body == DeliveredNotification.secretBody)
        #expect(items.map(\.wallet) == submission.payload.recipients.map(\.wallet), "in the order named")
        let byWallet = Dictionary(uniqueKeysWithValues: items.map { ($0.wallet, $0) })
        #expect(byWallet[follower]?.spam == false && byWallet[follower]?.pushed == true)
        #expect(byWallet[stranger]?.spam == true && byWallet[stranger]?.pushed == false)
        #expect(items.allSatisfy { $0.secret == secret.lowercased() })
        #expect(Set(NotificationPlanner.namedRecipients(of: submission)) == [follower, stranger])
    }

    /// docs/protocol.md §10's buckets: `burst` at once, then one every `3600 / perHour` seconds.
    @Test func aBucketHoldsItsBurstAndRefillsAtItsRate() throws {
        let bucket = try #require(SendBucket(perHour: 60, burst: 3))
        var fullAt: Int64 = 0
        for _ in 0..<3 { fullAt = try #require(bucket.take(fullAt: fullAt, now: 1_000_000)) }
        #expect(bucket.take(fullAt: fullAt, now: 1_000_000) == nil)
        #expect(bucket.secondsUntilToken(fullAt: fullAt, now: 1_000_000) == 60)
        #expect(bucket.take(fullAt: fullAt, now: 1_000_000 + 59_999) == nil)
        #expect(bucket.take(fullAt: fullAt, now: 1_000_000 + 60_000) != nil)
        #expect(bucket.secondsUntilToken(fullAt: fullAt, now: 1_000_000 + 59_001) == 1, "rounded up, at least 1")
        #expect(SendBucket(perHour: 0, burst: 3) == nil && SendBucket(perHour: 60, burst: 0) == nil)
        // A bucket full long ago is as full as a new one, never fuller.
        var old: Int64 = 5
        for _ in 0..<3 { old = try #require(bucket.take(fullAt: old, now: 9_000_000)) }
        #expect(bucket.take(fullAt: old, now: 9_000_000) == nil)
    }

    /// Filtered recipients take no token and get nothing; spam is never filtered but takes a token; a
    /// muted follower is stored, not pushed.
    @Test func aNamedSendFiltersThrottlesAndMutesInThatOrder() throws {
        let list = try ChannelSettingsList.parse(#"[{"id":"news","kind":"toggle","default":true}]"#)
        let (off, muted, fresh, spam) = (
            Fixtures.subscriber(0).address, Fixtures.subscriber(1).address, Fixtures.subscriber(2).address,
            Fixtures.subscriber(3).address
        )
        let policy = DeliveryPolicy(channelWalletPerHour: 60, channelWalletBurst: 1, channelBroadcastsPerHour: 0)
        let payload = NotificationDraft(title: "t", body: "b").targetedPayload(to: [off, muted, fresh, spam])
        let submission = try Fixtures.submission(
            String(payload.dropLast()) + #","setting":{"id":"news"}}"#, nonce: 1, policy: policy)
        let facts = NotificationFacts(
            channel: Self.desk, settings: list,
            followers: [
                off: FollowerFacts(choice: 0), muted: FollowerFacts(mutedUntil: 1_001), fresh: FollowerFacts(),
            ],
            walletBuckets: [fresh: 5_000 + 60_000])
        guard case .deliver(let delivery) = NotificationPlanner.plan(submission, facts: facts),
            case .named(let items, let filtered, let throttled) = delivery.recipients
        else { throw StoreError("not delivered") }
        #expect(filtered == 1 && throttled == [fresh])
        #expect(items.map(\.wallet) == [muted, spam])
        #expect(items.map(\.pushed) == [false, false] && items.map(\.muted) == [true, false])
        #expect(items.map(\.spam) == [false, true])
        #expect(delivery.buckets.wallets.map(\.wallet) == [muted, spam])
    }

    @Test func aNewListKeepsChoicesOfTheSameKindWithinTheirNewRange() throws {
        let old = try ChannelSettingsList.parse(
            #"[{"id":"a","kind":"toggle","default":true},{"id":"b","kind":"threshold","min":0,"max":9,"default":1},"#
                + #"{"id":"c","kind":"toggle","default":true}]"#)
        let new = try ChannelSettingsList.parse(
            #"[{"id":"a","kind":"toggle","default":false},{"id":"b","kind":"threshold","min":2,"max":5,"default":3},"#
                + #"{"id":"c","kind":"threshold","min":0,"max":1,"default":0},{"id":"d","kind":"toggle","default":true}]"#
        )
        let change = ChannelSettingsChange(
            channel: Fixtures.other.address, list: new, signed: Fixtures.signed(Fixtures.other, nonce: 1))
        #expect(
            SubscriberControlPlanner.plan(change, channelExists: true, current: old)
                == .save(new, kept: [KeptChoices(id: "a", values: 0...1), KeptChoices(id: "b", values: 2...5)]))
        #expect(SubscriberControlPlanner.plan(change, channelExists: false, current: .empty) == .refuseUnknownChannel)
    }

    @Test func readSyncGoesToPhonesOnlyWhenTheCountChanged() {
        func binding(_ platform: Platform) -> DeviceBindingRecord {
            DeviceBindingRecord(
                wallet: Fixtures.key.address, platform: platform, deviceToken: platform.rawValue, createdAt: 1,
                lastSeen: 1)
        }
        let bindings = [binding(.ios), binding(.android), binding(.webpush), binding(.iosSandbox)]
        let on = DeliveryPolicy()
        #expect(
            SubscriberControlPlanner.readSyncPushes(before: 3, after: 1, bindings: bindings, policy: on).map(\.platform)
                == [.ios, .android, .iosSandbox])
        #expect(SubscriberControlPlanner.readSyncPushes(before: 1, after: 1, bindings: bindings, policy: on).isEmpty)
        let noBadges = DeliveryPolicy(badges: false)
        #expect(
            SubscriberControlPlanner.readSyncPushes(before: 3, after: 1, bindings: bindings, policy: noBadges)
                .map(\.platform) == [.android])
        #expect(
            SubscriberControlPlanner.readSyncPushes(
                before: 3, after: 1, bindings: bindings, policy: DeliveryPolicy(readSync: false)
            ).isEmpty)
    }
}
