/// Numbers that come from outside the process (an answer's header or JSON, a file, a peer's flag) are
/// parsed here into a bounded range before any arithmetic touches them (docs/protocol.md §4.3, "numbers
/// a remote hands back"). A `Retry-After` is chosen by whoever runs the push service, and for Web Push
/// that is whoever registered the endpoint: `Int64("9223372036854775807")` parses, and `now + it` traps.
public enum RemoteNumber {
    /// The most seconds any parsed wait or lifetime stands for: about 100 years. Far past every deadline
    /// Herald keeps (a push lives at most 30 days), and small enough that adding it to any Unix time
    /// in seconds or milliseconds cannot overflow.
    public static let secondsCeiling: Int64 = 3_153_600_000

    /// A count of seconds as HTTP's `Retry-After` and OAuth's `expires_in` write it: decimal digits only,
    /// with spaces or tabs around them. Anything else (a sign, a fraction, an exponent, an HTTP date,
    /// nothing) is nil, so the caller falls back to its own rule. However many digits there are, the
    /// value comes back at most `secondsCeiling`.
    public static func seconds(_ text: some StringProtocol) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        var trailingSpace = false
        for byte in text.utf8 {
            switch byte {
            case 0x20, 0x09:
                if digits > 0 { trailingSpace = true }
            case 0x30...0x39:
                guard !trailingSpace else { return nil }
                digits += 1
                // Saturates: once past the ceiling it stays there, whatever follows.
                value = min(secondsCeiling, value * 10 + Int64(byte - 0x30))
            default:
                return nil
            }
        }
        return digits > 0 ? value : nil
    }

    /// A whole number that must lie in `range` to mean anything: nil when it is not decimal digits (an
    /// optional leading `-` allowed) or falls outside, so the caller refuses it rather than clamping a
    /// value it does not understand.
    public static func integer(_ text: some StringProtocol, in range: ClosedRange<Int64>) -> Int64? {
        guard let value = Int64(text), range.contains(value) else { return nil }
        return value
    }
}

extension Int64 {
    /// `self + other`, held at `.max` or `.min` instead of trapping: for time arithmetic on values that
    /// were bounded once but pass through several hands.
    public func addingSaturated(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}
