import Testing

@testable import HeraldServer

/// The outbox lane's rules, driven by events alone: no store, no providers, no clock. Outcomes are
/// plain numbers.
@Suite struct PushLaneStateMachineTests {
    typealias Lane = PushLaneStateMachine<Int>

    static func lane(batchSize: Int = 8, commitGroup: Int = 64, claimFailuresPerLog: Int = 60) -> Lane {
        Lane(batchSize: batchSize, commitGroup: commitGroup, claimFailuresPerLog: claimFailuresPerLog)
    }

    /// A lane that claimed `count` sends; the claim's own answer is not looked at.
    static func laneWithSends(_ count: Int, batchSize: Int = 8, commitGroup: Int = 64) -> Lane {
        var lane = lane(batchSize: batchSize, commitGroup: commitGroup)
        _ = lane.start()
        _ = lane.claimed(count)
        return lane
    }

    @Test func itClaimsOnlyWithAtMostHalfTheBatchInFlightAndOnlyUpToTheBatch() {
        var lane = Self.lane(batchSize: 8)
        #expect(lane.start().next == .claim(limit: 8))
        // A full batch in flight: no claim until half of it has ended.
        #expect(lane.claimed(8).next == .awaitEvent(startingWakeup: false))
        for outcome in 1...3 {
            #expect(lane.handle(.delivered(outcome)).next == .awaitEvent(startingWakeup: false))
        }
        #expect(lane.handle(.delivered(4)).next == .claim(limit: 4))
        // One more in flight than half: neither a claim nor a wake-up task, just the next event.
        #expect(lane.claimed(1).next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.delivered(5)).next == .claim(limit: 4))
        // Room left after the claim: a wake-up task is to claim again on a signal.
        #expect(lane.claimed(0).next == .awaitEvent(startingWakeup: true))
        #expect(lane.handle(.woken).next == .claim(limit: 4))
        _ = lane.claimed(0)
        #expect(lane.handle(.delivered(6)).next == .claim(limit: 5))
    }

    @Test func nothingDueAndNothingUnderWayMeansTheLaneWaitsIdleItself() {
        var lane = Self.lane(batchSize: 4)
        _ = lane.start()
        #expect(lane.claimed(0) == Lane.Action(effect: .none, next: .waitIdle))
        #expect(lane.idleWaitEnded().next == .claim(limit: 4))
    }

    /// Slow sends must not hold up new pushes: while they run, a task waits for the wake-up signal.
    @Test func sendsUnderWayStartOneWakeupTask() {
        var lane = Self.lane(batchSize: 4)
        _ = lane.start()
        #expect(lane.claimed(1).next == .awaitEvent(startingWakeup: true))
        // The commit of its outcome leaves the lane busy, and the wake-up task still waits: not a
        // second one, and no idle wait beside it.
        #expect(lane.handle(.delivered(1)) == Lane.Action(effect: .startCommit([1]), next: .claim(limit: 4)))
        #expect(lane.claimed(0).next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.committed).next == .claim(limit: 4))
        // The commit is done, nothing is in flight, but the wake-up task would take the signal an idle
        // wait waited for: the lane waits for that task instead.
        #expect(lane.claimed(0).next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.woken).next == .claim(limit: 4))
        #expect(lane.claimed(0).next == .waitIdle)
    }

    @Test func aCommitStartsOnceCommitGroupOutcomesWait() {
        var lane = Self.laneWithSends(8, commitGroup: 3)
        #expect(lane.handle(.delivered(1)).effect == .scheduleCommitTick)
        #expect(lane.handle(.delivered(2)).effect == .none)
        #expect(lane.handle(.delivered(3)).effect == .startCommit([1, 2, 3]))
    }

    @Test func belowTheGroupOneTickIsScheduledAndItForcesTheCommit() {
        var lane = Self.laneWithSends(8)
        #expect(lane.handle(.delivered(1)).effect == .scheduleCommitTick)
        #expect(lane.handle(.delivered(2)).effect == .none)
        #expect(lane.handle(.commitDelayElapsed).effect == .startCommit([1, 2]))
        #expect(lane.handle(.committed).effect == .none)
        // The tick was used up: the next outcome gets a tick of its own.
        #expect(lane.handle(.delivered(3)).effect == .scheduleCommitTick)
    }

    @Test func aLaneGoneIdleCommitsAtOnce() {
        var lane = Self.laneWithSends(2)
        #expect(lane.handle(.delivered(1)).effect == .scheduleCommitTick)
        #expect(lane.handle(.delivered(2)).effect == .startCommit([1, 2]))
        #expect(lane.handle(.committed).effect == .none)
        // A tick that was already scheduled finds nothing to commit.
        #expect(lane.handle(.commitDelayElapsed).effect == .none)
    }

    @Test func outcomesArrivingDuringACommitWaitForIt() {
        var lane = Self.laneWithSends(8, commitGroup: 2)
        _ = lane.handle(.delivered(1))
        #expect(lane.handle(.delivered(2)).effect == .startCommit([1, 2]))
        // A full group, a tick and an idle lane: none of them starts a second commit.
        #expect(lane.handle(.delivered(3)).effect == .none)
        #expect(lane.handle(.delivered(4)).effect == .none)
        #expect(lane.handle(.commitDelayElapsed).effect == .none)
        for outcome in 5...8 { #expect(lane.handle(.delivered(outcome)).effect == .none) }
        #expect(lane.handle(.committed).effect == .startCommit([3, 4, 5, 6, 7, 8]))
    }

    @Test func claimFailuresAreLoggedAtTheFirstAndEveryNthAndTheRecoveryOnce() {
        var lane = Self.lane(claimFailuresPerLog: 60)
        _ = lane.start()
        var logged: [Int] = []
        for _ in 1...120 {
            let action = lane.claimFailed()
            if case .logClaimFailure(let tries) = action.effect { logged.append(tries) }
            #expect(action.next == .waitIdle)
        }
        #expect(logged == [1, 60, 120])
        #expect(lane.claimed(0) == Lane.Action(effect: .logClaimRecovered(afterTries: 120), next: .waitIdle))
        #expect(lane.claimed(0).effect == .none)
        // The count starts over.
        #expect(lane.claimFailed().effect == .logClaimFailure(tries: 1))
        #expect(lane.claimed(0).effect == .logClaimRecovered(afterTries: 1))
    }

    @Test func shutdownClaimsNothingMoreAndFinishesOnlyOnceAllIsCommitted() {
        var lane = Self.lane(batchSize: 4)
        _ = lane.start()
        #expect(lane.claimed(3).next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.delivered(1)) == Lane.Action(effect: .scheduleCommitTick, next: .claim(limit: 2)))
        #expect(lane.shutdownRequested() == Lane.Action(effect: .none, next: .awaitEvent(startingWakeup: false)))
        var committed: [Int] = []
        var steps: [Lane.Step] = []
        for event: Lane.Event in [.delivered(2), .commitDelayElapsed, .delivered(3), .committed, .committed] {
            let action = lane.handle(event)
            if case .startCommit(let batch) = action.effect { committed += batch }
            steps.append(action.next)
        }
        #expect(committed == [1, 2, 3])
        #expect(steps.dropLast().allSatisfy { $0 == .awaitEvent(startingWakeup: false) })
        #expect(steps.last == .finished)
    }

    @Test func shutdownWaitsForTheWakeupTaskItStarted() {
        var lane = Self.lane(batchSize: 4)
        _ = lane.start()
        _ = lane.claimed(1)
        _ = lane.handle(.delivered(1))
        _ = lane.shutdownRequested()
        #expect(lane.handle(.committed).next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.woken).next == .finished)
    }

    @Test func anIdleLaneFinishesAtOnceOnShutdown() {
        var lane = Self.lane()
        _ = lane.start()
        _ = lane.claimed(0)
        #expect(lane.shutdownRequested() == Lane.Action(effect: .none, next: .finished))
        // Asked again (the loop asks between each step once cancelled), the answer is the same.
        #expect(lane.shutdownRequested().next == .finished)
    }
}
