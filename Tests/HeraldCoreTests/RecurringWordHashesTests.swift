import Testing

@testable import HeraldCore

/// The remembered hashes of recurring field values (actions, platforms, the audience) must be the
/// hashes of their bytes, and the table must stay bounded whatever clients send.
@Suite struct RecurringWordHashesTests {
    @Test func aRememberedHashIsTheHashAndTheTableStopsGrowingAtItsCapacity() {
        let table = RecurringWordHashes(capacity: 8)
        for index in 0..<20 {
            let word = "made-up-audience-\(index)"
            let expected = Keccak256.hash(word.utf8)
            #expect(table.keccak(word) == expected, "first time: \(word)")
            #expect(table.keccak(word) == expected, "second time: \(word)")
            #expect(table.isKept(word) == (index < 8), "\(word)")
        }
        #expect(table.count == 8)
    }

    /// "é" and "e" + U+0301 are equal Swift strings with different bytes: each keeps its own hash.
    @Test func canonicallyEquivalentValuesKeepTheHashesOfTheirOwnBytes() {
        let table = RecurringWordHashes(capacity: 8)
        let composed = "audience-caf\u{E9}"
        let decomposed = "audience-cafe\u{301}"
        #expect(composed == decomposed)
        #expect(Keccak256.hash(composed.utf8) != Keccak256.hash(decomposed.utf8))
        for _ in 0..<2 {
            #expect(table.keccak(composed) == Keccak256.hash(composed.utf8))
            #expect(table.keccak(decomposed) == Keccak256.hash(decomposed.utf8))
        }
        #expect(table.count == 2)
    }

    @Test func aLongValueIsHashedButNeverKept() {
        let table = RecurringWordHashes(capacity: 8)
        let long = String(repeating: "a", count: RecurringWordHashes.maximumLength + 1)
        #expect(table.keccak(long) == Keccak256.hash(long.utf8))
        #expect(!table.isKept(long))
        #expect(table.count == 0)
    }

    @Test func onlyActionPlatformAndAudienceFieldsRecur() {
        let recurring = zip(DeviceBinding.schema.fields, DeviceBinding.schema.recurring).filter(\.1).map(\.0.name)
        #expect(recurring == ["action", "platform", "audience"])
        let webPush = zip(WebPushBinding.schema.fields, WebPushBinding.schema.recurring).filter(\.1).map(\.0.name)
        #expect(webPush == ["action", "audience"], "endpoint, p256dh and auth are per subscription")
    }
}
