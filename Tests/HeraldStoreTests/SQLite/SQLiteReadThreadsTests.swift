import Dispatch
import GRDB
import NIOCore
import NIOPosix
import Testing

@testable import HeraldStoreSQLite

/// Under `herald serve` a read runs off the caller's event loop, on the store's read threads, and its
/// answer comes back on that loop.
@Suite struct SQLiteReadThreadsTests {
    @Test func aReadRunsOffTheLoopAndAnswersOnIt() async throws {
        try await SQLiteTestDatabase.with { database in
            let store = try database.open()
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let future = SQLiteReadThreads.read(store.pool, answeringOn: loop) { db in
                (onLoop: loop.inEventLoop, value: try Int.fetchOne(db, sql: "SELECT 42"))
            }
            #expect(future.eventLoop === loop)
            let answeredOnLoop = future.map { _ in loop.inEventLoop }
            let read = try await future.get()
            #expect(read.onLoop == false)
            #expect(read.value == 42)
            #expect(try await answeredOnLoop.get())
        }
    }

    /// The loop goes on serving while a read waits (a busy database may hold one for seconds): here the
    /// read waits for a task it sends to the loop, which could never run if the read held the loop.
    @Test func theLoopRunsWhileAReadWaits() async throws {
        try await SQLiteTestDatabase.with { database in
            let store = try database.open()
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let ranMeanwhile = try await SQLiteReadThreads.read(store.pool, answeringOn: loop) { _ in
                let signal = DispatchSemaphore(value: 0)
                loop.execute { signal.signal() }
                return signal.wait(timeout: .now() + 10) == .success
            }.get()
            #expect(ranMeanwhile)
        }
    }

    @Test func aFailingReadThrowsItsError() async throws {
        try await SQLiteTestDatabase.with { database in
            let store = try database.open()
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            await #expect(throws: DatabaseError.self) {
                try await SQLiteReadThreads.read(store.pool, answeringOn: loop) { db in
                    try Int.fetchOne(db, sql: "SELECT * FROM no_such_table")
                }.get()
            }
        }
    }
}
