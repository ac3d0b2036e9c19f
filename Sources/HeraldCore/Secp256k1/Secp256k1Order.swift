/// Constants of the secp256k1 group order n, big-endian, for range checks done without C.
public enum Secp256k1Order {
    /// n (public for tests that forge the high-s twin of a signature)
    public static let n: [UInt8] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
        0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b,
        0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
    ]
    /// ⌊n / 2⌋: the largest `s` EIP-2 accepts.
    static let halfN: [UInt8] = [
        0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d,
        0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0,
    ]

    /// Whether a 32-byte big-endian scalar lies in [1, n − 1].
    static func isValidScalar(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.count == 32 && !bytes.allSatisfy { $0 == 0 } && compare(bytes, n) < 0
    }

    /// Whether a 32-byte big-endian `s` is at most n/2 (EIP-2).
    static func isLowS(_ bytes: ArraySlice<UInt8>) -> Bool { compare(bytes, halfN) <= 0 }

    /// Big-endian comparison of equal-length byte strings.
    static func compare(_ lhs: ArraySlice<UInt8>, _ rhs: [UInt8]) -> Int {
        for (a, b) in zip(lhs, rhs) where a != b { return a < b ? -1 : 1 }
        return 0
    }
}
