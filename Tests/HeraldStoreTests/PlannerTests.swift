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
        guard case .deliver(let stored, let recipients) = plan else {
            Issue.record("refused: \(plan)")
            return
        }
        #expect(recipients == .everySubscriber)
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
        guard case .deliver(let stored, .named(let items)) = plan else {
            Issue.record("not named: \(plan)")
            return
        }
        #expect(stored.title == DeliveredNotification.secretTitle(app: "Desk"))
        #expect(stored.body == DeliveredNotification.secretBody)
        #expect(items.map(\.wallet) == submission.payload.recipients.map(\.wallet), "in the order named")
        let byWallet = Dictionary(uniqueKeysWithValues: items.map { ($0.wallet, $0) })
        #expect(byWallet[follower]?.spam == false && byWallet[follower]?.pushed == true)
        #expect(byWallet[stranger]?.spam == true && byWallet[stranger]?.pushed == false)
        #expect(items.allSatisfy { $0.secret == secret.lowercased() })
        #expect(Set(NotificationPlanner.namedRecipients(of: submission)) == [follower, stranger])
    }
}
