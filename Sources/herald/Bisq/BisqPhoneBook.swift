import Foundation
import HeraldCLISupport
import HeraldCore

/// The phones `herald bisq pair` paired, in `$HERALD_HOME/bisq.json` (mode 0600, written atomically):
/// it holds each phone's key, which reads every message sent to it.
struct BisqPhoneBook {
    struct Phone: Codable, Equatable {
        var name: String
        var descriptor: String
        var platform: Platform
        var key: String
        var deviceToken: String
        /// The Herald server the phone was paired through; `bisq send` uses its `GET /relay`.
        var server: String
    }

    let home: String
    var path: String { home + "/bisq.json" }

    private struct File: Codable {
        var phones: [Phone]
    }

    func load() throws -> [Phone] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        do {
            return try JSONDecoder().decode(File.self, from: data).phones
        } catch {
            throw CLIError(.badInput, "\(path) is damaged: not a Bisq phone list")
        }
    }

    func save(_ phones: [Phone]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do {
            try AtomicFile.makeFolder(home)
            try AtomicFile.write(Array(try encoder.encode(File(phones: phones))), to: path, replace: true)
        } catch let error as HeraldError {
            throw CLIError(.unexpected, "cannot save \(path): \(error.reason)")
        }
    }
}
