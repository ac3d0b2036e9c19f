import Foundation
import HeraldFuzzing
import Testing

/// Every fuzz seed (`Fuzz/Corpus/<target>/`) and every input that once crashed a target
/// (`Fuzz/Regressions/<target>/`) goes through the fuzz targets' own entry points on each
/// `swift test`, without the fuzzer: a crash found by `make fuzz` becomes a regression test by
/// copying its input into `Fuzz/Regressions/<target>/`.
@Suite struct FuzzReplayTests {
    static let fuzzFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The inputs kept for `target` under `folder` (dot files and the folder's README left out).
    static func inputs(_ folder: String, _ target: FuzzTarget) throws -> [URL] {
        let directory = fuzzFolder.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
        guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") && $0.pathExtension != "md" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test(arguments: FuzzTarget.allCases)
    func seedsAndRegressionsRunThroughTheTarget(_ target: FuzzTarget) throws {
        let seeds = try Self.inputs("Corpus", target)
        let regressions = try Self.inputs("Regressions", target)
        // A target without seeds would start the fuzzer from nothing: keep at least one per target.
        #expect(!seeds.isEmpty, "no seed inputs in Fuzz/Corpus/\(target.rawValue)")
        for input in seeds + regressions {
            let bytes = try [UInt8](Data(contentsOf: input))
            // Returning is the assertion: a crash here takes the test process down and fails the run.
            bytes.withUnsafeBufferPointer { target.run($0) }
        }
    }

    @Test func everyTargetHasAFolderOfSeeds() throws {
        let folders = try FileManager.default.contentsOfDirectory(
            atPath: Self.fuzzFolder.appendingPathComponent("Corpus").path)
        #expect(Set(folders) == Set(FuzzTarget.allCases.map(\.rawValue)), "Fuzz/Corpus folders and targets differ")
    }

    @Test func theWebPushSeedsIncludeBodiesThatDecryptForTheTargetsSubscription() throws {
        let opened = try Self.inputs("Corpus", .webpush).compactMap {
            FuzzTarget.openWebPush(try [UInt8](Data(contentsOf: $0)))
        }
        #expect(opened.count == 3)
        #expect(opened.allSatisfy { $0.first == UInt8(ascii: "{") })
    }

    @Test func theIngestSeedsIncludeBodiesThatDecryptForTheFixedSubscription() throws {
        let opened = try Self.inputs("Corpus", .webPushIngest).compactMap {
            FuzzTarget.openWebPush(try [UInt8](Data(contentsOf: $0)))
        }
        #expect(opened.count == 3)
    }
}
