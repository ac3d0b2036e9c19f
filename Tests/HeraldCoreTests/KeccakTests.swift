import HeraldCore
import Testing

@Suite struct KeccakTests {
    @Test func everyVectorMatches() throws {
        let cases = try Vectors.cases("keccak256")
        #expect(cases.count == 6)
        for item in cases {
            let input = try Hex.decode(try item.string("input_hex"))
            #expect(
                Hex.encode(Keccak256.hash(input)) == (try item.string("keccak256")), "input of \(input.count) bytes")
        }
    }

    @Test func vectorsCoverTheRateBoundary() throws {
        let lengths = try Vectors.cases("keccak256").map { try Hex.decode(try $0.string("input_hex")).count }
        #expect(lengths.contains(135) && lengths.contains(136) && lengths.contains(137))
    }

    @Test func streamingInRandomPiecesEqualsOneShot() {
        var rng = SplitMix64(seed: 0x4b45_4343)
        for length in [0, 1, 64, 65, 135, 136, 137, 271, 272, 273, 1000] {
            let input = rng.bytes(length)
            var hasher = Keccak256()
            var offset = 0
            while offset < input.count {
                let take = Int.random(in: 1...50, using: &rng)
                hasher.update(input[offset..<min(input.count, offset + take)])
                offset += take
            }
            #expect(hasher.finalize() == Keccak256.hash(input), "length \(length)")
        }
    }

    @Test func emptyInputIsTheWellKnownDigest() {
        #expect(
            Hex.encode(Keccak256.hash([UInt8]())) == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
    }
}
