import Synchronization

/// keccak256 of the field values that recur in nearly every operation — an action, a platform, the
/// server's audience — remembered instead of hashed again. They are three of a registration's twelve
/// Keccak permutations (about 6,400 instructions each); a lookup costs a few hundred.
///
/// Only fields the schema marks as recurring come here (never a token, key or payload), and at most
/// `capacity` distinct values are kept: a client sending made-up audiences can fill the table, never
/// grow it, and what is not kept is simply hashed as before.
enum RecurringWordHashes {
    static let capacity = 64
    /// Longer values are hashed, not kept: no action, platform or sane audience is this long.
    static let maximumLength = 128

    private static let table = Mutex<[String: [UInt8]]>([:])

    /// How many values are kept, and whether one is (for tests).
    static var count: Int { table.withLock { $0.count } }
    static func isKept(_ word: String) -> Bool { table.withLock { $0[word] != nil } }

    static func keccak(_ word: String) -> [UInt8] {
        guard word.utf8.count <= maximumLength else { return Keccak256.hash(word.utf8) }
        if let known = table.withLock({ $0[word] }) { return known }
        let hash = Keccak256.hash(word.utf8)
        table.withLock { words in
            if words.count < capacity { words[word] = hash }
        }
        return hash
    }
}
