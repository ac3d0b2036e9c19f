import GRDB
import NIOCore
import NIOPosix

/// Where the SQLite store's reads run when their caller is on one of NIO's singleton event loops (every
/// request under `herald serve`): on threads of their own, the answer handed to the caller's loop. GRDB's
/// async read goes through an actor and a dispatch queue and resumes its caller on whichever loop NIO
/// picks, whose response write then often hops back to the connection's: a public-key read cost 185–213 µs
/// of CPU, mostly thread switches (`perf`: 13% of the node's samples in the scheduler's switch alone),
/// against 115–132 µs this way, and 7,213–8,308 reads/s against 12,130–13,899 (2026-12-07, 16
/// connections). A read never runs on the loop itself: a busy database may hold it for its busy timeout.
enum SQLiteReadThreads {
    /// Four threads for the process, started at the first read and never stopped, as NIO's own singletons:
    /// a read may wait on the disk, and GRDB keeps up to five reader connections.
    static let threads: NIOThreadPool = {
        let threads = NIOThreadPool(numberOfThreads: 4)
        threads.start()
        return threads
    }()

    /// `body` in a read transaction on one of the threads; the future completes on `home`.
    static func read<T: Sendable>(
        _ database: DatabasePool, answeringOn home: any EventLoop,
        _ body: @Sendable @escaping (Database) throws -> T
    ) -> EventLoopFuture<T> {
        threads.runIfActive(eventLoop: home) { try database.read(body) }
    }
}
