import HeraldCore
import HeraldStore
import Testing

@testable import HeraldServer

/// The 202 of `POST /v1/notifications` is written byte by byte (a broadcast's million sids): it must be
/// the JSON of docs/protocol.md §3 exactly, for any numbers.
@Suite struct AcceptedBodyTests {
    static func parsed(_ receipt: NotificationReceipt) throws -> JSONValue {
        try JSONParser.parse(NotificationController.acceptedBody(receipt))
    }

    @Test func sidsAreStringsAndCountsAreNumbers() throws {
        let body = try Self.parsed(NotificationReceipt(sids: [1, 10, 9_007_199_254_740_993], spam: 1, pushes: 4))
        #expect(body["sid"] == .array([.string("1"), .string("10"), .string("9007199254740993")]))
        #expect(body["recipients"] == .number("3"))
        #expect(body["pushes"] == .number("4"))
    }

    @Test func noRecipientsIsAnEmptyList() throws {
        let body = NotificationController.acceptedBody(NotificationReceipt(sids: [], spam: 0, pushes: 0))
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"sid":[],"recipients":0,"pushes":0,"filtered":0,"throttled":[]}"#)
    }

    /// docs/protocol.md §10: `filtered` counts, `throttled` lists addresses EIP-55 in payload order.
    @Test func filteredAndThrottledAreAlwaysThere() throws {
        let wallet = try EthereumAddress(parsing: "0x3f243fdace01cfd9719f7359c94ba11361f32471")
        let body = try Self.parsed(
            NotificationReceipt(sids: [4], spam: 0, pushes: 1, filtered: 2, throttled: [wallet, wallet]))
        #expect(body["filtered"] == .number("2"))
        #expect(body["throttled"] == .array([.string(wallet.checksummed), .string(wallet.checksummed)]))
    }

    @Test(arguments: [Int64(0), 7, 10, 99, 100, -5, Int64.max, Int64.min])
    func decimalsMatchTheStandardLibrary(_ value: Int64) {
        var out: [UInt8] = []
        NotificationController.appendDecimal(value, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == String(value))
    }
}
