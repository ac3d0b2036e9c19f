import HeraldCore
import HeraldStore
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

    @Test func itKeepsTheBatchInFlightFromPushesClaimedAhead() {
        var lane = Self.lane(batchSize: 8)
        #expect(lane.start().next == .claim(limit: 16))
        #expect(lane.claimStarted().next == .awaitEvent(startingWakeup: false))
        // Two batches claimed: one is sent, the other waits ready.
        let claimed = lane.claimed(16)
        #expect(claimed.sends == 8)
        #expect(claimed.next == .awaitEvent(startingWakeup: false))
        // Each ended send is replaced by a ready push; at one and a half batches the next claim starts.
        for outcome in 1...3 {
            let action = lane.handle(.delivered(outcome))
            #expect(action.sends == 1)
            #expect(action.next == .awaitEvent(startingWakeup: false))
        }
        let fourth = lane.handle(.delivered(4))
        #expect(fourth.sends == 1)
        #expect(fourth.next == .claim(limit: 4))
        // While it runs, the sends go on from what is ready, and no second claim starts.
        #expect(lane.claimStarted().next == .awaitEvent(startingWakeup: false))
        for outcome in 5...8 {
            let action = lane.handle(.delivered(outcome))
            #expect(action.sends == 1)
            #expect(action.next == .awaitEvent(startingWakeup: false))
        }
        // Nothing ready: the slot an ended send frees waits for the claim, whose pushes fill it at once.
        #expect(lane.handle(.delivered(9)).sends == 0)
        let more = lane.claimed(4)
        #expect(more.sends == 1)
        // Room is left (3 ready, 8 in flight): a wake-up task is to claim again on a signal.
        #expect(more.next == .awaitEvent(startingWakeup: true))
        #expect(lane.handle(.delivered(10)).next == .claim(limit: 6))
    }

    /// On shutdown the pushes held ready are handed back (recorded unsent, their claims ended), and so are
    /// those of a claim that was under way; the lane finishes once those too are committed.
    @Test func shutdownHandsBackWhatIsReadyAndWhatAClaimBrings() {
        var lane = Self.lane(batchSize: 2)
        _ = lane.start()
        _ = lane.claimStarted()
        #expect(lane.claimed(4).sends == 2)
        let shutdown = lane.shutdownRequested()
        #expect(shutdown.handBacks == 2)
        #expect(shutdown.sends == 0)
        #expect(shutdown.next == .awaitEvent(startingWakeup: false))
        var committed: [Int] = []
        for outcome in 1...4 {
            let action = lane.handle(.delivered(outcome))
            #expect(action.sends == 0)
            if case .startCommit(let batch) = action.effect { committed += batch }
        }
        #expect(committed == [1, 2, 3, 4])
        // The commit tick of the first outcome is still to come.
        #expect(lane.handle(.committed).next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.commitDelayElapsed).next == .finished)

        var claiming = Self.lane(batchSize: 2)
        _ = claiming.start()
        _ = claiming.claimStarted()
        #expect(claiming.shutdownRequested().next == .awaitEvent(startingWakeup: false))
        let late = claiming.claimed(3)
        #expect(late.handBacks == 3)
        #expect(late.sends == 0)
        for outcome in 1...3 { _ = claiming.handle(.delivered(outcome)) }
        #expect(claiming.handle(.committed).next == .awaitEvent(startingWakeup: false))
        #expect(claiming.handle(.commitDelayElapsed).next == .finished)
    }

    @Test func pushesReadyAreTakenOldestFirstAndHeldOnlyWhileTheLeaseCoversASend() throws {
        var ready = ReadyPushes()
        let readySince = ContinuousClock.now
        ready.append(try (1...5).map(Self.push), readySince: readySince)
        #expect(ready.take(2).map(\.push.id) == [1, 2])
        ready.append(try [Self.push(6)], readySince: readySince)
        #expect(ready.count == 4)
        #expect(ready.take(10).map(\.push.id) == [3, 4, 5, 6])
        #expect(ready.take(1).isEmpty)
        // The defaults: a 60 s lease, sends bounded by 30 s: 29 s of holding; 12 s: 2 s; 5 s: none.
        #expect(ReadyPushes.holdLimit(leaseSeconds: 60, sendDeadline: .seconds(30)) == .seconds(29))
        #expect(ReadyPushes.holdLimit(leaseSeconds: 12, sendDeadline: .seconds(9)) == .seconds(2))
        #expect(ReadyPushes.holdLimit(leaseSeconds: 5, sendDeadline: .milliseconds(3_750)) == nil)
    }

    static func push(_ id: Int64) throws -> QueuedPush {
        QueuedPush(
            id: id, sid: nil, wallet: try EthereumAddress(bytes: [UInt8](repeating: 1, count: 20)), platform: .ios,
            deviceToken: "aa", apnsID: [UInt8](repeating: 0, count: 16), queuedAt: 1, attempts: 0, notification: nil)
    }

    /// A lease too short to hold pushes: claims only what goes out at once, when half the batch ended.
    @Test func withoutClaimingAheadItClaimsOnlyWhatItSendsAtOnce() {
        var lane = Lane(batchSize: 8, claimsAhead: false, commitGroup: 64, claimFailuresPerLog: 60)
        #expect(lane.start().next == .claim(limit: 8))
        let claimed = lane.claimed(8)
        #expect(claimed.sends == 8)
        #expect(claimed.next == .awaitEvent(startingWakeup: false))
        for outcome in 1...3 { #expect(lane.handle(.delivered(outcome)).next == .awaitEvent(startingWakeup: false)) }
        #expect(lane.handle(.delivered(4)).next == .claim(limit: 4))
        #expect(lane.claimed(4).sends == 4)
    }

    @Test func nothingDueAndNothingUnderWayMeansTheLaneWaitsIdleItself() {
        var lane = Self.lane(batchSize: 4)
        _ = lane.start()
        #expect(lane.claimed(0) == Lane.Action(effect: .none, next: .waitIdle))
        #expect(lane.idleWaitEnded().next == .claim(limit: 8))
    }

    /// Slow sends must not hold up new pushes: while they run, a task waits for the wake-up signal.
    @Test func sendsUnderWayStartOneWakeupTask() {
        var lane = Self.lane(batchSize: 4)
        _ = lane.start()
        #expect(lane.claimed(1).next == .awaitEvent(startingWakeup: true))
        // The commit of its outcome leaves the lane busy, and the wake-up task still waits: not a
        // second one, and no idle wait beside it.
        #expect(lane.handle(.delivered(1)) == Lane.Action(effect: .startCommit([1]), next: .claim(limit: 8)))
        #expect(lane.claimed(0).next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.committed).next == .claim(limit: 8))
        // The commit is done, nothing is in flight, but the wake-up task would take the signal an idle
        // wait waited for: the lane waits for that task instead.
        #expect(lane.claimed(0).next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.woken).next == .claim(limit: 8))
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
        // Room for a claim is left, so a wake-up task starts; shutdown waits for it too.
        #expect(lane.claimed(3).next == .awaitEvent(startingWakeup: true))
        #expect(lane.handle(.delivered(1)) == Lane.Action(effect: .scheduleCommitTick, next: .claim(limit: 6)))
        #expect(lane.shutdownRequested() == Lane.Action(effect: .none, next: .awaitEvent(startingWakeup: false)))
        var committed: [Int] = []
        var steps: [Lane.Step] = []
        for event: Lane.Event in [.delivered(2), .commitDelayElapsed, .delivered(3), .committed, .woken, .committed] {
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

    // MARK: Pauses after short claims

    static func pausingLane(batchSize: Int = 100) -> Lane {
        Lane(batchSize: batchSize, commitGroup: 64, claimFailuresPerLog: 60, pausesAfterShortClaims: true)
    }

    /// A trickle gathers: after a claim of fewer than a quarter batch the next claim waits for the pause,
    /// even with room and the sends ended; then it claims at once.
    @Test func aShortClaimIsFollowedByAPauseBeforeTheNextClaim() {
        var lane = Self.pausingLane()
        _ = lane.start()
        _ = lane.claimStarted()
        let short = lane.claimed(13)
        #expect(short == Lane.Action(effect: .scheduleClaimPause, next: .awaitEvent(startingWakeup: false), sends: 13))
        for outcome in 1...13 {
            let action = lane.handle(.delivered(outcome))
            if case .claim = action.next { Issue.record("claimed during the pause after outcome \(outcome)") }
        }
        // Idle meanwhile (outcomes committed), it still waits for the pause, not for a signal.
        #expect(lane.handle(.committed).next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.claimPauseElapsed).next == .claim(limit: 200))
    }

    /// A claim of a quarter batch or more, or of nothing, starts no pause; nor does a lane built without.
    @Test func fullAndEmptyClaimsStartNoPause() {
        var full = Self.pausingLane()
        _ = full.start()
        _ = full.claimStarted()
        #expect(full.claimed(25).effect == .none)
        var empty = Self.pausingLane()
        _ = empty.start()
        _ = empty.claimStarted()
        #expect(empty.claimed(0) == Lane.Action(effect: .none, next: .waitIdle))
        var without = Self.lane(batchSize: 100)
        _ = without.start()
        _ = without.claimStarted()
        #expect(without.claimed(3).effect == .none)
    }

    /// Shutdown during a pause hands nothing more to claim and finishes once the pause's timer reported.
    @Test func shutdownWaitsForThePauseTimer() {
        var lane = Self.pausingLane()
        _ = lane.start()
        _ = lane.claimStarted()
        _ = lane.claimed(2)
        _ = lane.handle(.delivered(1))
        _ = lane.handle(.delivered(2))
        #expect(lane.shutdownRequested().next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.committed).next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.commitDelayElapsed).next == .awaitEvent(startingWakeup: false))
        #expect(lane.handle(.claimPauseElapsed).next == .finished)
    }
}
