import Foundation
import HeraldCLISupport

/// The executables a benchmark starts as children: this `herald-dev` (the fakes) and the `herald` beside
/// it (`serve`, `inbox list`). SwiftPM builds both into one folder, and they are installed together.
enum BenchExecutables {
    static var heraldDev: URL { URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath() }

    static func herald() throws -> URL {
        let sibling = heraldDev.deletingLastPathComponent().appendingPathComponent("herald")
        guard FileManager.default.isExecutableFile(atPath: sibling.path) else {
            throw CLIError(
                .unexpected,
                "no herald executable beside \(heraldDev.path): build it too (swift build --product herald)")
        }
        return sibling
    }
}
