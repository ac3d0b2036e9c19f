import HeraldCore
import HeraldStore
import Testing

/// The bytes a spent nonce keeps of its operation's answer (docs/protocol.md §11.2) read back as what was
/// written, and damaged bytes are a thrown error, never a trap or a different answer.
@Suite struct StoredAnswerTests {
    @Test func everyAppliedOutcomeReadsBack() throws {
        for outcome: DeviceChangeOutcome in [
            .registered(created: true), .registered(created: false), .unregistered, .absent,
        ] {
            #expect(try StoredAnswer.device(try #require(StoredAnswer.encode(outcome))) == outcome)
        }
        for outcome: SubscriptionChangeOutcome in [
            .subscribed(created: true), .subscribed(created: false), .unsubscribed(existed: true),
            .unsubscribed(existed: false),
        ] {
            #expect(try StoredAnswer.subscription(try #require(StoredAnswer.encode(outcome))) == outcome)
        }
        let list = try ChannelSettingsList.parse(
            #"[{"id":"news","kind":"toggle","default":true},{"id":"min","kind":"threshold","min":0,"max":100,"default":10}]"#
        )
        let controls: [SubscriberControlOutcome] = [
            .channelSettings(.saved(list)), .channelSettings(.saved(.empty)), .delegate(.applied(.added)),
            .delegate(.applied(.removed)), .delegate(.applied(.absent)),
            .subscriberSettings(.saved(EffectiveSetting.resolve(list, choices: ["news": 0, "min": 90]))),
            .mute(.muted(until: 1_900_000_000)), .mute(.muted(until: 0)), .readMark(.marked(unread: 12, pushes: 2)),
        ]
        for outcome in controls {
            #expect(try StoredAnswer.control(try #require(StoredAnswer.encode(outcome))) == outcome)
        }
    }

    @Test func refusalsKeepNothing() {
        #expect(StoredAnswer.encode(DeviceChangeOutcome.overLimit) == nil)
        #expect(StoredAnswer.encode(DeviceChangeOutcome.replayed) == nil)
        #expect(StoredAnswer.encode(SubscriptionChangeOutcome.unknownChannel) == nil)
        #expect(StoredAnswer.encode(SubscriberControlOutcome.mute(.notSubscribed)) == nil)
        #expect(StoredAnswer.encode(SubscriberControlOutcome.delegate(.tooMany)) == nil)
    }

    /// A broadcast's million sids keep as one run; sids out of order, gaps and throttled addresses keep too.
    @Test func receiptsReadBackWithTheirSidsInOrder() throws {
        let broadcast = NotificationReceipt(sids: Array(5_000_001...6_000_000), spam: 0, pushes: 999_000, muted: 1_000)
        let bytes = StoredAnswer.encode(broadcast)
        #expect(bytes.count < 32)
        #expect(try StoredAnswer.notification(bytes) == broadcast)
        let throttled = [Fixtures.key.address, Fixtures.other.address]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let sids = (0..<Int.random(in: 0...50, using: &generator)).map { _ in
                Int64.random(in: 1...1_000, using: &generator)
            }
            let receipt = NotificationReceipt(
                sids: sids, spam: Int.random(in: 0...50, using: &generator), pushes: 7, filtered: 3,
                throttled: Array(throttled.prefix(Int.random(in: 0...2, using: &generator))), muted: 2)
            #expect(try StoredAnswer.notification(StoredAnswer.encode(receipt)) == receipt)
        }
    }

    @Test func damagedBytesAreAnError() throws {
        let receipt = NotificationReceipt(sids: [1, 2, 3, 10], spam: 1, pushes: 2, throttled: [Fixtures.key.address])
        let good = StoredAnswer.encode(receipt)
        for cut in 0..<good.count {
            #expect(throws: StoreError.self) { try StoredAnswer.notification(Array(good.prefix(cut))) }
        }
        #expect(throws: StoreError.self) { try StoredAnswer.notification(good + [0]) }
        // A run count far past what the bytes hold sizes nothing.
        #expect(throws: StoreError.self) { try StoredAnswer.notification([3, 0xff, 0xff, 0xff, 0xff, 0x0f]) }
        // A run of ten billion sids is refused rather than built.
        #expect(throws: StoreError.self) {
            try StoredAnswer.notification([3, 1, 2, 0x80, 0xc8, 0xaf, 0xa0, 0x25, 0, 0, 0, 0, 0])
        }
        let device = try #require(StoredAnswer.encode(DeviceChangeOutcome.unregistered))
        #expect(throws: StoreError.self) { try StoredAnswer.subscription(device) }
        #expect(throws: StoreError.self) { try StoredAnswer.control(device) }
        #expect(throws: StoreError.self) { try StoredAnswer.device([1, 9]) }
        #expect(throws: StoreError.self) { try StoredAnswer.control([]) }
        #expect(throws: StoreError.self) { try StoredAnswer.control([200, 1]) }
    }
}
