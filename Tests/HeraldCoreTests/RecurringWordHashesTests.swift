import Testing

@testable import HeraldCore

/// The remembered hashes of recurring field values (actions, platforms, the audience) must be the
/// hashes, and the table must stay bounded whatever clients send.
@Suite struct RecurringWordHashesTests {
    @Test func aRememberedHashIsTheHashAndTheTableStopsGrowingAtItsCapacity() {
        for index in 0..<(RecurringWordHashes.capacity + 20) {
            let word = "made-up-audience-\(index)"
            let expected = Keccak256.hash(word.utf8)
            #expect(RecurringWordHashes.keccak(word) == expected, "first time: \(word)")
            #expect(RecurringWordHashes.keccak(word) == expected, "second time: \(word)")
        }
        #expect(RecurringWordHashes.count == RecurringWordHashes.capacity)
        let late = "an-audience-after-the-table-filled"
        #expect(RecurringWordHashes.keccak(late) == Keccak256.hash(late.utf8))
        #expect(!RecurringWordHashes.isKept(late))
    }

    @Test func aLongValueIsHashedButNeverKept() {
        let long = String(repeating: "a", count: RecurringWordHashes.maximumLength + 1)
        #expect(RecurringWordHashes.keccak(long) == Keccak256.hash(long.utf8))
        #expect(!RecurringWordHashes.isKept(long))
    }

    @Test func onlyActionPlatformAndAudienceFieldsRecur() {
        let recurring = zip(DeviceBinding.schema.fields, DeviceBinding.schema.recurring).filter(\.1).map(\.0.name)
        #expect(recurring == ["action", "platform", "audience"])
        let webPush = zip(WebPushBinding.schema.fields, WebPushBinding.schema.recurring).filter(\.1).map(\.0.name)
        #expect(webPush == ["action", "audience"], "endpoint, p256dh and auth are per subscription")
    }
}
