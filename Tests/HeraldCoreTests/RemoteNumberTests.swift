import HeraldCore
import Testing

/// docs/protocol.md §4.3: a number from a peer is parsed into a range before any arithmetic.
@Suite struct RemoteNumberTests {
    @Test(
        arguments: [
            ("0", 0), ("30", 30), (" 120\t", 120), ("007", 7), ("3153600000", RemoteNumber.secondsCeiling),
            ("9223372036854775807", RemoteNumber.secondsCeiling), ("99999999999999999999", RemoteNumber.secondsCeiling),
            (String(repeating: "9", count: 5000), RemoteNumber.secondsCeiling),
        ] as [(String, Int64)])
    func digitsAreSecondsHeldAtTheCeiling(_ text: String, _ seconds: Int64) {
        #expect(RemoteNumber.seconds(text) == seconds)
    }

    @Test(arguments: [
        "", " ", "-5", "+5", "1.5", "1e9", "0x10", "12 34", "Fri, 31 Dec 1999 23:59:59 GMT", "٣", "5\u{0}",
    ])
    func anythingButDigitsIsIgnored(_ text: String) {
        #expect(RemoteNumber.seconds(text) == nil)
    }

    @Test func integersOutsideTheirRangeAreRefused() {
        #expect(RemoteNumber.integer("600", in: 1...86_400) == 600)
        #expect(RemoteNumber.integer("-5", in: 1...86_400) == nil)
        #expect(RemoteNumber.integer("99999999999999999999", in: 1...86_400) == nil)
        #expect(RemoteNumber.integer("86401", in: 1...86_400) == nil)
    }

    @Test func sumsSaturateInsteadOfTrapping() {
        #expect(Int64.max.addingSaturated(1) == .max)
        #expect(Int64(1_700_000_000).addingSaturated(.max) == .max)
        #expect(Int64.min.addingSaturated(-1) == .min)
        #expect(Int64(5).addingSaturated(-7) == -2)
    }
}
