/// Keccak-256 as Ethereum uses it: the original Keccak padding (`0x01`), not SHA3-256's (`0x06`).
///
/// Streaming use:
/// ```swift
/// var hasher = Keccak256()
/// hasher.update(part1)
/// hasher.update(part2)
/// let digest = hasher.finalize()
/// ```
/// or one-shot: `Keccak256.hash(bytes)`. The state lives inline (no heap allocation), so the
/// one-shot form costs one permutation per 136-byte block and nothing else.
public struct Keccak256: Sendable {
    /// Bytes absorbed per permutation: 1600 bits minus twice the 256-bit output.
    public static let rate = 136
    /// Length of the digest in bytes.
    public static let digestByteCount = 32

    private var state = KeccakState()
    /// Bytes of the current, incomplete block already XORed into the state.
    private var absorbed = 0

    public init() {}

    /// Absorbs `bytes`.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        let count = bytes.count
        while offset < count {
            let take = min(Self.rate - absorbed, count - offset)
            state.xor(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)]), at: absorbed)
            absorbed += take
            offset += take
            if absorbed == Self.rate {
                state.permute()
                absorbed = 0
            }
        }
    }

    /// Absorbs any contiguous byte collection (`[UInt8]`, `Data`, `ArraySlice<UInt8>`, `String.UTF8View`…).
    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(UnsafeRawBufferPointer(buffer))
        }
        if done == nil {
            Array(bytes).withUnsafeBytes { update($0) }
        }
    }

    /// Pads, permutes and returns the 32-byte digest.
    public consuming func finalize() -> [UInt8] {
        state.xorByte(0x01, at: absorbed)
        state.xorByte(0x80, at: Self.rate - 1)
        state.permute()
        return state.prefixBytes(Self.digestByteCount)
    }

    /// One-shot digest of `bytes`.
    public static func hash<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = Keccak256()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
