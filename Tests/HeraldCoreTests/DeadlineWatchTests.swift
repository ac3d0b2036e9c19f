import Synchronization
import Testing

@testable import HeraldCore

@Suite struct DeadlineWatchTests {
    private struct Late: Error {}

    @Test func anAnswerInTimeIsReturned() async throws {
        let watch = DeadlineWatch(tick: .milliseconds(10))
        let value = try await watch.answer(within: .seconds(5), late: { Late() }) { (answer: OneAnswer<Int>) in
            answer.resume(returning: 7)
            return nil
        }
        #expect(value == 7)
        let thrown = await #expect(throws: StoreLikeError.self) {
            try await watch.answer(within: .seconds(5), late: { Late() }) { (answer: OneAnswer<Int>) in
                answer.resume(throwing: StoreLikeError())
                return nil
            }
        }
        #expect(thrown != nil)
    }

    private struct StoreLikeError: Error {}

    private final class Flag: Sendable {
        private let raised = Atomic<Bool>(false)
        func raise() { raised.store(true, ordering: .relaxed) }
        var isRaised: Bool { raised.load(ordering: .relaxed) }
    }

    @Test func workThatNeverAnswersIsAnsweredLateAndCancelled() async throws {
        let watch = DeadlineWatch(tick: .milliseconds(10))
        let cancelled = Flag()
        let started = ContinuousClock.now
        var lateError: (any Error)?
        do {
            _ = try await watch.answer(within: .milliseconds(50), late: { Late() }) { (answer: OneAnswer<Int>) in
                let work = Task {
                    // Far longer than any test run: only the watch's cancellation ends it early, and
                    // only the watch answers `Late`. (No upper bound on the wait is asserted: tests
                    // that run beside this one, scrypt's in debug builds, can hold both of the pool's
                    // threads for a minute.)
                    try? await Task.sleep(for: .seconds(3600))
                    if Task.isCancelled { cancelled.raise() }
                    answer.resume(returning: 1)
                }
                return { work.cancel() }
            }
        } catch {
            lateError = error
        }
        #expect(lateError is Late)
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(50))
        for _ in 0..<500 where !cancelled.isRaised { try await Task.sleep(for: .milliseconds(10)) }
        #expect(cancelled.isRaised)
    }

    @Test func theSecondAnswerIsIgnored() async throws {
        let watch = DeadlineWatch(tick: .milliseconds(10))
        let kept = Mutex<OneAnswer<Int>?>(nil)
        let value = try await watch.answer(within: .seconds(5), late: { Late() }) { (answer: OneAnswer<Int>) in
            kept.withLock { $0 = answer }
            #expect(answer.resume(with: .success(1)))
            return nil
        }
        #expect(value == 1)
        let answer = try #require(kept.withLock { $0 })
        #expect(!answer.resume(with: .success(2)))
    }

    @Test func manyWaitersEachGetTheirOwnAnswerAndTheWatchThenStops() async throws {
        let watch = DeadlineWatch(tick: .milliseconds(5))
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<200 {
                group.addTask {
                    do {
                        // Odd waiters never answered; their deadlines differ, so an early one is no
                        // reason to answer a later one.
                        let timeout = Duration.milliseconds(20 + index % 7 * 10)
                        _ = try await watch.answer(within: timeout, late: { Late() }) { (answer: OneAnswer<Int>) in
                            if index.isMultiple(of: 2) { answer.resume(returning: index) }
                            return nil
                        }
                        return index.isMultiple(of: 2)
                    } catch {
                        return !index.isMultiple(of: 2) && error is Late
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.count == 200)
        #expect(outcomes.allSatisfy { $0 })
        for _ in 0..<200 where watch.isWatching { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!watch.isWatching)
    }

    @Test func theTickIsATwentiethOfTheTimeoutWithinBounds() {
        #expect(DeadlineWatch.tick(for: .seconds(2)) == .milliseconds(100))
        #expect(DeadlineWatch.tick(for: .milliseconds(50)) == .milliseconds(10))
        #expect(DeadlineWatch.tick(for: .seconds(600)) == .milliseconds(250))
    }
}
