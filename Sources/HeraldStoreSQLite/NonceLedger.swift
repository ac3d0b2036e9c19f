import HeraldCore
import HeraldStore
import Synchronization

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
