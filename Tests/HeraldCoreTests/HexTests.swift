import HeraldCore
import Testing

@Suite struct HexTests {
    @Test(arguments: [
        ("", [UInt8]()), ("0x", []), ("00ff", [0x00, 0xFF]), ("0xABcd", [0xAB, 0xCD]), ("0X0a", [0x0A]),
    ])
    func wellFormedHexDecodes(text: String, bytes: [UInt8]) throws {
        #expect(try Hex.decode(text) == bytes)
        #expect(try Hex.decode(Substring("--" + text).dropFirst(2)) == bytes)
    }

    @Test(arguments: ["0", "0x1", "zz", "0xg0", "é1", "0x 1", "1x00"])
    func malformedHexIsRefused(text: String) {
        #expect(throws: HeraldError.self) { try Hex.decode(text) }
    }

    @Test func roundTripsAndCountsAreChecked() throws {
        let bytes = (0...255).map { UInt8($0) }
        #expect(try Hex.decode(Hex.encode(bytes)) == bytes)
        #expect(throws: HeraldError.self) { try Hex.decode("00ff", count: 3) }
    }
}
