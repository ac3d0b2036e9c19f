/// The 1600-bit Keccak state as 25 little-endian lanes held inline, and keccak-f[1600].
struct KeccakState: Sendable {
    // A tuple keeps the state on the stack; an Array would cost an allocation per hash.
    private var lanes:
        (
            UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64, UInt64, UInt64, UInt64
        ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// XORs `bytes` into the state starting at byte `offset` (lanes are little-endian, as on the wire).
    mutating func xor(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        withUnsafeMutableBytes(of: &lanes) { raw in
            var index = offset
            var source = 0
            // Whole lanes at a time when aligned on a lane boundary: the common case for long inputs.
            while index % 8 != 0, source < bytes.count {
                raw[index] ^= bytes[source]
                index += 1
                source += 1
            }
            let lanePointer = raw.baseAddress!.assumingMemoryBound(to: UInt64.self)
            while bytes.count - source >= 8 {
                let word = bytes.loadUnaligned(fromByteOffset: source, as: UInt64.self)
                lanePointer[index / 8] ^= UInt64(littleEndian: word)
                index += 8
                source += 8
            }
            while source < bytes.count {
                raw[index] ^= bytes[source]
                index += 1
                source += 1
            }
        }
    }

    mutating func xorByte(_ byte: UInt8, at offset: Int) {
        withUnsafeMutableBytes(of: &lanes) { $0[offset] ^= byte }
    }

    func prefixBytes(_ count: Int) -> [UInt8] {
        withUnsafeBytes(of: lanes) { Array($0.prefix(count)) }
    }

    private static let roundConstants: [UInt64] = [
        0x0000_0000_0000_0001, 0x0000_0000_0000_8082, 0x8000_0000_0000_808a, 0x8000_0000_8000_8000,
        0x0000_0000_0000_808b, 0x0000_0000_8000_0001, 0x8000_0000_8000_8081, 0x8000_0000_0000_8009,
        0x0000_0000_0000_008a, 0x0000_0000_0000_0088, 0x0000_0000_8000_8009, 0x0000_0000_8000_000a,
        0x0000_0000_8000_808b, 0x8000_0000_0000_008b, 0x8000_0000_0000_8089, 0x8000_0000_0000_8003,
        0x8000_0000_0000_8002, 0x8000_0000_0000_0080, 0x0000_0000_0000_800a, 0x8000_0000_8000_000a,
        0x8000_0000_8000_8081, 0x8000_0000_0000_8080, 0x0000_0000_8000_0001, 0x8000_0000_8000_8008,
    ]

    /// keccak-f[1600]: 24 rounds of θ, ρ, π, χ, ι. Written on named locals so the optimiser keeps
    /// all 25 lanes in registers or stack slots instead of going through memory indexing.
    mutating func permute() {
        var (
            a00, a01, a02, a03, a04, a05, a06, a07, a08, a09, a10, a11, a12,
            a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24
        ) = lanes
        @inline(__always) func rotl(_ x: UInt64, _ n: UInt64) -> UInt64 { (x << n) | (x >> (64 &- n)) }
        for round in 0..<24 {
            // θ
            let c0 = a00 ^ a05 ^ a10 ^ a15 ^ a20
            let c1 = a01 ^ a06 ^ a11 ^ a16 ^ a21
            let c2 = a02 ^ a07 ^ a12 ^ a17 ^ a22
            let c3 = a03 ^ a08 ^ a13 ^ a18 ^ a23
            let c4 = a04 ^ a09 ^ a14 ^ a19 ^ a24
            let d0 = c4 ^ rotl(c1, 1)
            let d1 = c0 ^ rotl(c2, 1)
            let d2 = c1 ^ rotl(c3, 1)
            let d3 = c2 ^ rotl(c4, 1)
            let d4 = c3 ^ rotl(c0, 1)
            // ρ and π: b[y][2x+3y] = rotl(a[x][y] ^ d[x], r[x][y])
            let b00 = a00 ^ d0
            let b10 = rotl(a01 ^ d1, 1)
            let b20 = rotl(a02 ^ d2, 62)
            let b05 = rotl(a03 ^ d3, 28)
            let b15 = rotl(a04 ^ d4, 27)
            let b16 = rotl(a05 ^ d0, 36)
            let b01 = rotl(a06 ^ d1, 44)
            let b11 = rotl(a07 ^ d2, 6)
            let b21 = rotl(a08 ^ d3, 55)
            let b06 = rotl(a09 ^ d4, 20)
            let b07 = rotl(a10 ^ d0, 3)
            let b17 = rotl(a11 ^ d1, 10)
            let b02 = rotl(a12 ^ d2, 43)
            let b12 = rotl(a13 ^ d3, 25)
            let b22 = rotl(a14 ^ d4, 39)
            let b23 = rotl(a15 ^ d0, 41)
            let b08 = rotl(a16 ^ d1, 45)
            let b18 = rotl(a17 ^ d2, 15)
            let b03 = rotl(a18 ^ d3, 21)
            let b13 = rotl(a19 ^ d4, 8)
            let b14 = rotl(a20 ^ d0, 18)
            let b24 = rotl(a21 ^ d1, 2)
            let b09 = rotl(a22 ^ d2, 61)
            let b19 = rotl(a23 ^ d3, 56)
            let b04 = rotl(a24 ^ d4, 14)
            // χ
            a00 = b00 ^ (~b01 & b02)
            a01 = b01 ^ (~b02 & b03)
            a02 = b02 ^ (~b03 & b04)
            a03 = b03 ^ (~b04 & b00)
            a04 = b04 ^ (~b00 & b01)
            a05 = b05 ^ (~b06 & b07)
            a06 = b06 ^ (~b07 & b08)
            a07 = b07 ^ (~b08 & b09)
            a08 = b08 ^ (~b09 & b05)
            a09 = b09 ^ (~b05 & b06)
            a10 = b10 ^ (~b11 & b12)
            a11 = b11 ^ (~b12 & b13)
            a12 = b12 ^ (~b13 & b14)
            a13 = b13 ^ (~b14 & b10)
            a14 = b14 ^ (~b10 & b11)
            a15 = b15 ^ (~b16 & b17)
            a16 = b16 ^ (~b17 & b18)
            a17 = b17 ^ (~b18 & b19)
            a18 = b18 ^ (~b19 & b15)
            a19 = b19 ^ (~b15 & b16)
            a20 = b20 ^ (~b21 & b22)
            a21 = b21 ^ (~b22 & b23)
            a22 = b22 ^ (~b23 & b24)
            a23 = b23 ^ (~b24 & b20)
            a24 = b24 ^ (~b20 & b21)
            // ι
            a00 ^= Self.roundConstants[round]
        }
        lanes = (
            a00, a01, a02, a03, a04, a05, a06, a07, a08, a09, a10, a11, a12,
            a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24
        )
    }
}
