import Foundation
import HeraldCore
import Testing

/// Loads a vector file copied from `shared/vectors/` with HeraldCore's own strict JSON parser, which
/// keeps 78-digit integers exact.
enum Vectors {
    static func load(_ name: String) throws -> JSONValue {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Vectors"))
        return try JSONParser.parse(Array(try Data(contentsOf: url)))
    }

    static func cases(_ name: String, _ key: String = "cases") throws -> [JSONValue] {
        guard case .array(let items)? = try load(name)[key] else {
            Issue.record("\(name).json has no \(key) array")
            return []
        }
        return items
    }
}

extension JSONValue {
    /// A string member that the vector file must have.
    func string(_ key: String) throws -> String {
        try #require(self[key]?.stringValue, "missing string \(key)")
    }
}

/// A seeded generator so that a failing property test can be replayed (the seed is in the test).
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) } }
}
