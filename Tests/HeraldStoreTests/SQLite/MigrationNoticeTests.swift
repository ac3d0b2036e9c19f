import GRDB
import Logging
import Synchronization
import Testing

@testable import HeraldStore
@testable import HeraldStoreSQLite

/// An upgrade that may copy whole tables says so before it starts; a new database is made silently.
@Suite struct MigrationNoticeTests {
    @Test func anUpgradeIsAnnouncedAndANewDatabaseIsNot() async throws {
        try await SQLiteTestDatabase.with { database in
            let fresh = LogCapture()
            _ = try database.open(logger: fresh.logger)
            #expect(fresh.messages.filter { $0.contains("schema") }.isEmpty)
        }
        try await SQLiteTestDatabase.with { database in
            let queue = try database.queue()
            try Migrations.migrator.migrate(queue, upTo: "0008_webpush")
            try queue.close()
            let upgrade = LogCapture()
            _ = try database.open(logger: upgrade.logger)
            let messages = upgrade.messages
            #expect(messages.count == 2, "\(messages)")
            #expect(messages.first?.contains("migrating the database schema") == true)
            #expect(messages.first?.contains("0009_checks_without_lists") == true)
            #expect(messages.first?.contains("0008_webpush") == false)
            #expect(messages.last?.contains("database schema migrated") == true)
        }
    }
}

/// Collects what a logger was told at notice level and above, message and metadata in one line.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    var messages: [String] { lines.withLock { $0 } }

    var logger: Logger {
        Logger(label: "capture") { _ in Handler(capture: self) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .notice

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).map { "\($0)=\($1)" }.sorted().joined(separator: " ")
            capture.lines.withLock { $0.append("\(event.message) \(fields)") }
        }
    }
}
