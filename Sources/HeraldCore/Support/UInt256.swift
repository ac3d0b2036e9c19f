/// An unsigned 256-bit integer: just enough arithmetic to parse, compare and encode
/// the `uint256` values of signed operations and EIP-712 typed data.
public struct UInt256: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Limbs, most significant first.
    private var limbs: (UInt64, UInt64, UInt64, UInt64)

    public static let zero = UInt256(0)
    public static let max = UInt256(limbs: (.max, .max, .max, .max))

    private init(limbs: (UInt64, UInt64, UInt64, UInt64)) { self.limbs = limbs }

    public init(_ value: UInt64) { limbs = (0, 0, 0, value) }

    /// 32 big-endian bytes (shorter input is left-padded; longer throws).
    public init<Bytes: Collection>(bigEndian bytes: Bytes) throws(HeraldError) where Bytes.Element == UInt8 {
        guard bytes.count <= 32 else { throw HeraldError(.invalidTypedData, "more than 256 bits") }
        let padded = [UInt8](repeating: 0, count: 32 - bytes.count) + bytes
        func limb(_ start: Int) -> UInt64 { padded[start..<(start + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
        limbs = (limb(0), limb(8), limb(16), limb(24))
    }

    /// Parses decimal digits. With `canonical`, a leading zero (other than "0" itself) is refused.
    /// Returns nil for empty input, a non-digit, or a value ≥ 2^256.
    public init?(decimal text: some StringProtocol, canonical: Bool = false) {
        let digits = text.utf8
        guard !digits.isEmpty, digits.count <= 78 else { return nil }
        if canonical, digits.count > 1, digits.first == 0x30 { return nil }
        var value = UInt256.zero
        for digit in digits {
            guard digit >= 0x30, digit <= 0x39 else { return nil }
            guard let times10 = value.multipliedReportingOverflow(by: 10),
                let next = times10.addingReportingOverflow(UInt64(digit - 0x30))
            else { return nil }
            value = next
        }
        self = value
    }

    /// Parses `0x`-prefixed hex of at most 64 digits.
    public init?(hex text: some StringProtocol) {
        guard text.hasPrefix("0x") || text.hasPrefix("0X"), text.count > 2, text.count <= 66 else { return nil }
        var digits = String(text.dropFirst(2))
        if digits.count % 2 == 1 { digits = "0" + digits }
        guard let bytes = try? Hex.decode(digits), let value = try? UInt256(bigEndian: bytes) else { return nil }
        self = value
    }

    /// 32 big-endian bytes: the EIP-712 and ABI encoding.
    public var bigEndianBytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(32)
        for limb in [limbs.0, limbs.1, limbs.2, limbs.3] {
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: limb >> UInt64(shift)))
            }
        }
        return out
    }

    /// The value when it fits in 64 bits.
    public var uint64: UInt64? { limbs.0 == 0 && limbs.1 == 0 && limbs.2 == 0 ? limbs.3 : nil }

    /// The value clamped to `Int64.max`: enough to compare against clocks.
    public var clampedInt64: Int64 {
        guard let small = uint64, small <= UInt64(Int64.max) else { return .max }
        return Int64(small)
    }

    /// Number of significant bits.
    public var bitWidth: Int {
        let ordered = [limbs.0, limbs.1, limbs.2, limbs.3]
        for (position, limb) in ordered.enumerated() where limb != 0 {
            return (3 - position) * 64 + (64 - limb.leadingZeroBitCount)
        }
        return 0
    }

    /// Decimal digits, no leading zeros.
    public var description: String {
        if self == .zero { return "0" }
        var digits: [UInt8] = []
        var value = self
        while value != .zero {
            let (quotient, remainder) = value.dividedBy10()
            digits.append(UInt8(remainder) + 0x30)
            value = quotient
        }
        return String(decoding: digits.reversed(), as: UTF8.self)
    }

    public static func == (lhs: UInt256, rhs: UInt256) -> Bool {
        lhs.limbs.0 == rhs.limbs.0 && lhs.limbs.1 == rhs.limbs.1 && lhs.limbs.2 == rhs.limbs.2
            && lhs.limbs.3 == rhs.limbs.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(limbs.0)
        hasher.combine(limbs.1)
        hasher.combine(limbs.2)
        hasher.combine(limbs.3)
    }

    public static func < (lhs: UInt256, rhs: UInt256) -> Bool {
        [lhs.limbs.0, lhs.limbs.1, lhs.limbs.2, lhs.limbs.3]
            .lexicographicallyPrecedes([rhs.limbs.0, rhs.limbs.1, rhs.limbs.2, rhs.limbs.3])
    }

    /// Two's complement negation modulo 2^256, for EIP-712 `intN` encoding.
    public var twosComplement: UInt256 {
        let inverted = UInt256(limbs: (~limbs.0, ~limbs.1, ~limbs.2, ~limbs.3))
        return inverted.addingReportingOverflow(1) ?? .zero
    }

    // Limb arithmetic on the tuple directly: these run per digit while parsing every request's
    // nonce and times, so they must not allocate.
    private func multipliedReportingOverflow(by factor: UInt64) -> UInt256? {
        let (h3, l3) = limbs.3.multipliedFullWidth(by: factor)
        let (h2, l2) = limbs.2.multipliedFullWidth(by: factor)
        let (h1, l1) = limbs.1.multipliedFullWidth(by: factor)
        let (h0, l0) = limbs.0.multipliedFullWidth(by: factor)
        guard h0 == 0 else { return nil }
        let (r2, c2) = l2.addingReportingOverflow(h3)
        let (r1a, c1a) = l1.addingReportingOverflow(h2)
        let (r1, c1b) = r1a.addingReportingOverflow(c2 ? 1 : 0)
        let (r0a, c0a) = l0.addingReportingOverflow(h1)
        let (r0, c0b) = r0a.addingReportingOverflow((c1a ? 1 : 0) + (c1b ? 1 : 0))
        guard !c0a, !c0b else { return nil }
        return UInt256(limbs: (r0, r1, r2, l3))
    }

    private func addingReportingOverflow(_ addend: UInt64) -> UInt256? {
        let (r3, c3) = limbs.3.addingReportingOverflow(addend)
        let (r2, c2) = limbs.2.addingReportingOverflow(c3 ? 1 : 0)
        let (r1, c1) = limbs.1.addingReportingOverflow(c2 ? 1 : 0)
        let (r0, c0) = limbs.0.addingReportingOverflow(c1 ? 1 : 0)
        guard !c0 else { return nil }
        return UInt256(limbs: (r0, r1, r2, r3))
    }

    private func dividedBy10() -> (UInt256, UInt64) {
        var result = [UInt64](repeating: 0, count: 4)
        var remainder: UInt64 = 0
        let input = [limbs.0, limbs.1, limbs.2, limbs.3]
        for position in 0..<4 {
            let (quotient, rest) = UInt64(10).dividingFullWidth((remainder, input[position]))
            result[position] = quotient
            remainder = rest
        }
        return (UInt256(limbs: (result[0], result[1], result[2], result[3])), remainder)
    }
}
