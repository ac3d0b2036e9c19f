/// Little pieces of the binary form of ``StoredAnswer``: LEB128 varints, zigzag for signed numbers,
/// length-prefixed bytes. Kept answers are read only by the server that wrote them (or a newer one).
struct AnswerWriter {
    private(set) var bytes: [UInt8] = []

    init(tag: UInt8) { bytes.append(tag) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// Bytes of a known length, unprefixed.
    mutating func raw(_ value: some Collection<UInt8>) { bytes.append(contentsOf: value) }

    mutating func unsigned(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func signed(_ value: Int64) {
        unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func count(_ value: Int) { unsigned(UInt64(max(value, 0))) }

    mutating func data(_ value: some Collection<UInt8>) {
        count(value.count)
        bytes.append(contentsOf: value)
    }
}

/// Reads what ``AnswerWriter`` wrote; any short or malformed input throws (a corrupt row, never a crash).
struct AnswerReader {
    private let bytes: [UInt8]
    private var position = 0

    /// Checks the first byte is `tag`.
    init(_ bytes: [UInt8], tag: UInt8) throws(AnswerDecodingError) {
        self.bytes = bytes
        guard try byte() == tag else { throw AnswerDecodingError("a kept answer of another kind") }
    }

    var isAtEnd: Bool { position == bytes.count }

    mutating func byte() throws(AnswerDecodingError) -> UInt8 {
        guard position < bytes.count else { throw AnswerDecodingError("a kept answer ends early") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func unsigned() throws(AnswerDecodingError) -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: UInt64(0), to: 64, by: 7) {
            let next = try byte()
            value |= UInt64(next & 0x7f) << shift
            if next & 0x80 == 0 { return value }
        }
        throw AnswerDecodingError("a kept answer holds a number past 64 bits")
    }

    mutating func signed() throws(AnswerDecodingError) -> Int64 {
        let raw = try unsigned()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A count of things each taking at least `bytesEach` bytes: no more than the bytes left can hold,
    /// so that a corrupt count never sizes an allocation.
    mutating func count(bytesEach: Int = 1) throws(AnswerDecodingError) -> Int {
        let value = try unsigned()
        guard value <= UInt64(bytes.count - position) / UInt64(max(bytesEach, 1)) else {
            throw AnswerDecodingError("a kept answer's count exceeds its bytes")
        }
        return Int(value)
    }

    /// A number that is not bounded by the bytes left (an item count, a unread number).
    mutating func integer() throws(AnswerDecodingError) -> Int {
        let value = try unsigned()
        guard value <= UInt64(Int.max) else { throw AnswerDecodingError("a kept answer's number is too large") }
        return Int(value)
    }

    mutating func data() throws(AnswerDecodingError) -> [UInt8] {
        let length = try count()
        defer { position += length }
        return Array(bytes[position..<position + length])
    }

    mutating func data(exactly length: Int) throws(AnswerDecodingError) -> [UInt8] {
        guard bytes.count - position >= length else { throw AnswerDecodingError("a kept answer ends early") }
        defer { position += length }
        return Array(bytes[position..<position + length])
    }

    func finish() throws(AnswerDecodingError) {
        guard isAtEnd else { throw AnswerDecodingError("a kept answer has bytes past its end") }
    }
}

struct AnswerDecodingError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
