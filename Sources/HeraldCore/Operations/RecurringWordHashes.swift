import Synchronization

/// keccak256 of the field values that recur in nearly every operation — an action, a platform, the
/// server's audience — remembered instead of hashed again. They are three of a registration's twelve
/// Keccak permutations (about 6,400 instructions each); a lookup costs a few hundred.
///
/// Only fields the schema marks as recurring come here (never a token, key or payload), and at most
/// `capacity` distinct values are kept: a client sending made-up audiences can fill the table, never
/// grow it, and what is not kept is simply hashed as before.
final class RecurringWordHashes: Sendable {
    /// The one operations use.
    static let shared = RecurringWordHashes(capacity: 64)
    /// Longer values are hashed, not kept: no action, platform or sane audience is this long.
    static let maximumLength = 128

    let capacity: Int
    private let table = Mutex<[Word: [UInt8]]>([:])

    init(capacity: Int) { self.capacity = capacity }

    /// How many values are kept, and whether one is (for tests).
    var count: Int { table.withLock { $0.count } }
    func isKept(_ word: String) -> Bool { table.withLock { $0[Word(word)] != nil } }

    func keccak(_ text: String) -> [UInt8] {
        guard text.utf8.count <= Self.maximumLength else { return Keccak256.hash(text.utf8) }
        let word = Word(text)
        if let known = table.withLock({ $0[word] }) { return known }
        let hash = Keccak256.hash(text.utf8)
        table.withLock { words in
            if words.count < capacity { words[word] = hash }
        }
        return hash
    }

    /// A string compared and hashed by its UTF-8 bytes, which are what Keccak hashes: Swift's `String`
    /// equality is canonical equivalence, under which "é" and "e\u{301}" are equal though their bytes,
    /// and so their hashes, differ.
    struct Word: Hashable {
        let text: String

        init(_ text: String) { self.text = text }

        static func == (left: Word, right: Word) -> Bool { left.text.utf8.elementsEqual(right.text.utf8) }

        func hash(into hasher: inout Hasher) {
            var bytes = text
            bytes.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }
}
