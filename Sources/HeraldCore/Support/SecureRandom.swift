/// Bytes and characters from the system CSPRNG (`SystemRandomNumberGenerator`: getrandom(2) on Linux).
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
    }

    private static let alphanumerics = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// `length` characters drawn uniformly from `[A-Za-z0-9]`: the form of type-2 secrets (docs/protocol.md §5.1).
    public static func alphanumericString(length: Int = 15) -> String {
        var rng = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphanumerics.randomElement(using: &rng) ?? "A" })
    }
}

/// Compares in time that depends on the length only, never on where the inputs differ.
func constantTimeEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for (a, b) in zip(lhs, rhs) { difference |= a ^ b }
    return difference == 0
}
