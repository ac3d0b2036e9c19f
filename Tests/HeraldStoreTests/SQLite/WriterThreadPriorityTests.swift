import Foundation
import Testing

@testable import HeraldStore
@testable import HeraldStoreSQLite

#if canImport(Glibc)
import Glibc
#endif

/// The group-commit writer's thread raises its priority above the thread that started it, when it may.
@Suite struct WriterThreadPriorityTests {
    @Test func theWriterThreadRunsAheadOfTheRequestThreadsWhenPermitted() async throws {
        try await SQLiteTestDatabase.with { database in
            let store = try database.open()
            // The first write starts the writer's thread.
            #expect(
                try await store.apply(Fixtures.change(token: Fixtures.token(1), nonce: 1)) == .registered(created: true)
            )
            let outcome = try #require(store.writer.priority.withLock { $0 })
            switch outcome {
            case .raised(let from, let to):
                #expect(to < from)
                #expect(to == max(-20, from - WriterThreadPriority.levels) || getuid() != 0)
                // The nice value is the thread's own: some thread of this process runs at `to`.
                #expect(Self.threadNiceValues().contains(to), "no thread at nice \(to): \(Self.threadNiceValues())")
            case .unchanged:
                // Only an unprivileged process may be refused (root always may raise a priority).
                #expect(getuid() != 0, "running as root, the writer's priority was not raised")
            }
        }
    }

    /// Field 19 of `/proc/self/task/TID/stat` for every thread of this process.
    static func threadNiceValues() -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // Fields after the command's closing parenthesis start at field 3: field 19 is the 17th.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 16 ? Int32(fields[16]) : nil
        }
    }
}
