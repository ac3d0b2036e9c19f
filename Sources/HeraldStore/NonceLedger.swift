import HeraldCore
import Synchronization

/// 128 bits identifying a (signer, nonce) pair: keccak256(signer ‖ nonce as 32 bytes)[0..<16].
/// Two pairs colliding is a 2^-128 event; a birthday collision among even 10^9 live nonces, 2^-68.
struct NonceDigest: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(signer: EthereumAddress, nonce: UInt256) {
        let hash = Keccak256.hash(signer.bytes + nonce.bigEndianBytes)
        high = hash[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = hash[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
    }
}

/// The spent nonces that can still matter, in memory: the replay check costs a hash lookup instead
/// of a random B-tree probe and insert per request. It mirrors the durable `nonces` log exactly:
/// entries are added only after the transaction that logged them committed, and loaded from the
/// log at start. Memory is bounded by the validity window: entries leave once `retained_until` passes.
///
/// Entries live in one set per minute of `retained_until`, so that pruning drops whole sets and
/// no per-entry expiry is stored (16 bytes an entry instead of 24, which matters at a million).
final class NonceLedger: Sendable {
    private let generations = Mutex<[Int64: Set<NonceDigest>]>([:])

    private static func minute(_ retainedUntil: Int64) -> Int64 { retainedUntil / 60 }

    func contains(_ digest: NonceDigest) -> Bool {
        generations.withLock { generations in generations.values.contains { $0.contains(digest) } }
    }

    func insert(_ committed: [(NonceDigest, Int64)]) {
        generations.withLock { generations in
            for (digest, retainedUntil) in committed {
                generations[Self.minute(retainedUntil), default: []].insert(digest)
            }
        }
    }

    /// Drops entries whose operations can no longer be valid. Whole minutes go only once every
    /// entry in them is past `cutoff`, so an entry may outlive its retention by under a minute.
    func prune(expiredBefore cutoff: Int64) {
        generations.withLock { generations in
            for minute in generations.keys where (minute + 1) * 60 <= cutoff { generations.removeValue(forKey: minute) }
        }
    }

    var count: Int { generations.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}

/// A bounded set of wallets whose public key is already stored. Only ever a shortcut: forgetting an
/// entry costs one `INSERT OR IGNORE`, never correctness. Cleared whole when full (cheap, rare).
final class KnownKeys: Sendable {
    static let capacity = 100_000
    private let wallets = Mutex<Set<EthereumAddress>>([])

    func contains(_ wallet: EthereumAddress) -> Bool {
        wallets.withLock { $0.contains(wallet) }
    }

    func insert(_ added: [EthereumAddress]) {
        guard !added.isEmpty else { return }
        wallets.withLock { wallets in
            if wallets.count + added.count > Self.capacity { wallets.removeAll(keepingCapacity: true) }
            wallets.formUnion(added)
        }
    }

    /// Forgets wallets whose key was deleted (retention), so that their next signature stores it again.
    func remove(_ removed: [EthereumAddress]) {
        guard !removed.isEmpty else { return }
        wallets.withLock { wallets in wallets.subtract(removed) }
    }
}
