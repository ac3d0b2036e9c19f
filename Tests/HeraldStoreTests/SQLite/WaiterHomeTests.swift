import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import HeraldStore
@testable import HeraldStoreSQLite

/// The writer answers a waiter on the event loop it came from, and only on loops that never shut down.
@Suite struct WaiterHomeTests {
    @Test func offEveryEventLoopThereIsNoHome() {
        #expect(WaiterHome.current() == nil)
    }

    @Test func onASingletonLoopThatLoopIsTheHome() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let home = try await loop.submit { WaiterHome.current().map(ObjectIdentifier.init) }.get()
        #expect(home == ObjectIdentifier(loop))
    }

    /// A private group can be shut down with answers still on their way: they would be dropped there.
    @Test func aPrivateGroupsLoopIsNoHome() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let home = try await group.next().submit { WaiterHome.current().map(ObjectIdentifier.init) }.get()
        try await group.shutdownGracefully()
        #expect(home == nil)
    }

    @Test func answersRunOnTheirHomeAndTheHomelessAtOnce() async throws {
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        let ranOnHome = Mutex<[Bool]>([])
        let homeless = Mutex<Int>(0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let expected = loops.count * 3
            var answers: [(home: (any EventLoop)?, answer: @Sendable () -> Void)] = []
            for loop in loops {
                for _ in 0..<3 {
                    let answer: @Sendable () -> Void = {
                        let count = ranOnHome.withLock { ran in
                            ran.append(loop.inEventLoop)
                            return ran.count
                        }
                        if count == expected { done.resume() }
                    }
                    answers.append((home: loop, answer: answer))
                }
            }
            answers.append((home: nil, answer: { homeless.withLock { $0 += 1 } }))
            WaiterHome.deliver(answers)
            // The homeless answer ran before deliver returned, on this thread.
            #expect(homeless.withLock { $0 } == 1)
        }
        #expect(ranOnHome.withLock { $0 } == Array(repeating: true, count: loops.count * 3))
    }
}
