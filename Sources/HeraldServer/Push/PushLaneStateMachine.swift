/// The decisions of one push outbox lane, apart from the work that carries them out: the lane's loop in
/// `PushOutboxService` feeds in what happened (a claim came back, a send, a commit or a timer ended,
/// shutdown began) and runs the action that comes back (claim, start a commit, wait). No clock, no I/O
/// and no concurrency here, so that each rule below is tested by feeding events alone; the shape is
/// AsyncHTTPClient's connection pool state machine. `Outcome` is what a send ends with, opaque here.
///
/// The rules, each of which once was a bug:
/// - Up to `batchSize` sends are in flight, refilled from pushes claimed ahead, so that one slow answer
///   never holds up the others. A claim runs beside the sends (one at a time) and holds up to another
///   `batchSize` ready; the next starts once ready and in flight are at most one and a half batches.
///   Claimed only when half the batch had ended and awaited before sending, a lane on PostgreSQL sent
///   about 48 pushes per 8-13 ms claim and was idle meanwhile.
/// - Pushes held ready are sent only while their lease has room for a whole send (the loop checks);
///   on shutdown they are handed back unsent, so that another run claims them at once. A lease too short
///   to hold any (`claimsAhead` false) claims only what can be sent at once, when half the batch ended.
/// - Outcomes are committed in groups, one commit at a time: a group goes once `commitGroup` outcomes
///   wait, when the lane falls idle, or when its oldest outcome waited the commit delay. Without the
///   time bound a lane under light load left outcomes unrecorded until it fell idle, and a crash sent
///   them all again.
/// - While sends run, a wake-up task waits for a signal, so new and deferred pushes need not wait for
///   slow sends; the lane waits idle itself only when no such task waits already (the signal would go
///   to that task, and the idle wait would sit out the idle poll).
/// - A claim that brings some pushes but fewer than a quarter batch (a trickle: setup confirmations behind
///   registrations, targeted sends) is followed by the next one only after a pause (`pausesAfterShortClaims`),
///   so the trickle gathers: without it a PostgreSQL lane claimed about 13 pushes at a time, each claim a
///   transaction of 1.2 ms, as fast as registrations committed. An empty claim waits for a signal instead.
/// - While the database is down every lane fails to claim about once a second: the first failure and
///   every `claimFailuresPerLog`-th are logged, not a flood that hides the cause.
/// - On shutdown nothing more is claimed, every send under way finishes and every outcome is committed.
struct PushLaneStateMachine<Outcome> {
    /// What a task of the lane's task group reports when it ends.
    enum Event {
        /// A send ended with this outcome, which now waits for a commit.
        case delivered(Outcome)
        /// The commit of `Effect.startCommit` ended: its outcomes are recorded and their claims ended.
        case committed
        /// The delay of `Effect.scheduleCommitTick` passed: the oldest waiting outcome waited long enough.
        case commitDelayElapsed
        /// The wake-up task of `Step.awaitEvent(startingWakeup: true)` ended: a wake-up signal came, or
        /// the idle poll passed, while sends were under way.
        case woken
        /// The pause of `Effect.scheduleClaimPause` after a short claim passed.
        case claimPauseElapsed
    }

    /// What to do now: first the effect and the sends, then the step, which ends in the lane's next event.
    struct Action {
        let effect: Effect
        let next: Step
        /// Start this many sends of the pushes held ready, oldest first.
        var sends = 0
        /// End this many of the pushes held ready unsent (shutdown): each is recorded as deferred, not an
        /// attempt, and reports `Event.delivered` like a send.
        var handBacks = 0

        init(effect: Effect, next: Step, sends: Int = 0, handBacks: Int = 0) {
            self.effect = effect
            self.next = next
            self.sends = sends
            self.handBacks = handBacks
        }
    }

    enum Effect {
        case none
        /// Record these outcomes, then report `Event.committed`. The write must run to its end even
        /// when shutdown cancels the lane: it records what was already sent.
        case startCommit([Outcome])
        /// Report `Event.commitDelayElapsed` once the commit delay has passed.
        case scheduleCommitTick
        /// Report `Event.claimPauseElapsed` once the claim pause has passed; claim nothing meanwhile.
        case scheduleClaimPause
        /// Claiming has now failed this many times in a row.
        case logClaimFailure(tries: Int)
        /// Claiming works again after this many failures.
        case logClaimRecovered(afterTries: Int)
    }

    enum Step: Equatable {
        /// Start a claim of up to `limit` due pushes beside what runs, report `claimStarted()`, and its
        /// answer, when it comes as the lane's next event, with `claimed(_:)` or `claimFailed()`.
        case claim(limit: Int)
        /// Nothing is under way: wait for a wake-up signal or the idle poll, then report `idleWaitEnded()`.
        case waitIdle
        /// Wait for the next event of the lane's tasks and report it with `handle(_:)`. With
        /// `startingWakeup`, first start a task that waits for a wake-up signal or the idle poll and
        /// reports `Event.woken`.
        case awaitEvent(startingWakeup: Bool)
        /// Shutdown is complete: every send ended and every outcome is committed.
        case finished
    }

    private let batchSize: Int
    private let claimsAhead: Bool
    private let commitGroup: Int
    private let claimFailuresPerLog: Int
    private let pausesAfterShortClaims: Bool

    /// Sends (and hand-backs) under way.
    private var inFlight = 0
    /// Pushes claimed and not yet sent.
    private var ready = 0
    private var claiming = false
    /// Outcomes no commit has taken yet.
    private var waiting: [Outcome] = []
    private var committing = false
    private var tickPending = false
    private var wakePending = false
    /// A pause after a short claim runs: no claim until it ends.
    private var pausing = false
    private var claimFailures = 0
    private var shuttingDown = false

    init(
        batchSize: Int, claimsAhead: Bool = true, commitGroup: Int, claimFailuresPerLog: Int,
        pausesAfterShortClaims: Bool = false
    ) {
        self.batchSize = batchSize
        self.claimsAhead = claimsAhead
        self.commitGroup = commitGroup
        self.pausesAfterShortClaims = pausesAfterShortClaims
        // At least one: it divides the failure count.
        self.claimFailuresPerLog = max(1, claimFailuresPerLog)
    }

    /// The lane's first step.
    mutating func start() -> Action {
        Action(effect: .none, next: nextStep())
    }

    /// The claim of `Step.claim` is under way.
    mutating func claimStarted() -> Action {
        claiming = true
        return Action(effect: .none, next: stepAfterClaim())
    }

    /// The claim brought `count` pushes, now held ready.
    mutating func claimed(_ count: Int) -> Action {
        claiming = false
        ready += count
        var effect: Effect = claimFailures > 0 ? .logClaimRecovered(afterTries: claimFailures) : .none
        claimFailures = 0
        // One effect an action: a claim that reports a recovery is not paused after (rare, harmless).
        if pausesAfterShortClaims && !shuttingDown && count > 0 && count < max(1, batchSize / 4),
            case .none = effect
        {
            pausing = true
            effect = .scheduleClaimPause
        }
        let (sends, handBacks) = startSends()
        return Action(effect: effect, next: stepAfterClaim(), sends: sends, handBacks: handBacks)
    }

    mutating func claimFailed() -> Action {
        claiming = false
        claimFailures += 1
        let logged = claimFailures == 1 || claimFailures % claimFailuresPerLog == 0
        return Action(effect: logged ? .logClaimFailure(tries: claimFailures) : .none, next: stepAfterClaim())
    }

    mutating func idleWaitEnded() -> Action {
        Action(effect: .none, next: nextStep())
    }

    mutating func handle(_ event: Event) -> Action {
        var dueByTime = false
        switch event {
        case .delivered(let outcome):
            inFlight -= 1
            waiting.append(outcome)
        case .committed:
            committing = false
        case .commitDelayElapsed:
            tickPending = false
            dueByTime = true
        case .woken:
            wakePending = false
        case .claimPauseElapsed:
            pausing = false
        }
        let (sends, handBacks) = startSends()
        let effect = commitEffect(force: dueByTime)
        return Action(effect: effect, next: nextStep(), sends: sends, handBacks: handBacks)
    }

    /// From now on nothing is claimed and no wake-up task starts, and the pushes held ready are handed
    /// back; the lane finishes once every task it started has reported. Harmless to repeat.
    mutating func shutdownRequested() -> Action {
        shuttingDown = true
        let (sends, handBacks) = startSends()
        return Action(effect: .none, next: nextStep(), sends: sends, handBacks: handBacks)
    }

    /// Fills the free send slots from the pushes held ready; on shutdown hands them all back.
    private mutating func startSends() -> (sends: Int, handBacks: Int) {
        if shuttingDown {
            let handBacks = ready
            ready = 0
            inFlight += handBacks
            return (0, handBacks)
        }
        let sends = max(0, min(ready, batchSize - inFlight))
        ready -= sends
        inFlight += sends
        return (sends, 0)
    }

    /// Whether a claim has room: at most one and a half batches in flight and ready together (half a batch
    /// in flight without claiming ahead).
    private var hasRoomToClaim: Bool {
        inFlight + ready <= (claimsAhead ? batchSize : 0) + batchSize / 2
    }

    /// Claim when there is room and no claim runs (up to two batches in flight and ready, one without
    /// claiming ahead), then see about waiting.
    private mutating func nextStep() -> Step {
        if !shuttingDown && !claiming && !pausing && hasRoomToClaim {
            return .claim(limit: (claimsAhead ? 2 : 1) * batchSize - inFlight - ready)
        }
        return stepAfterClaim()
    }

    private mutating func stepAfterClaim() -> Step {
        if shuttingDown {
            let tasksLeft = inFlight > 0 || committing || tickPending || wakePending || claiming || pausing
            return tasksLeft ? .awaitEvent(startingWakeup: false) : .finished
        }
        // A claim's answer is the next event; it decides what follows.
        if claiming { return .awaitEvent(startingWakeup: false) }
        // The pause's end is the next claim's cue, whatever signals come meanwhile.
        if pausing { return .awaitEvent(startingWakeup: false) }
        if inFlight == 0 && ready == 0 && !committing && !wakePending { return .waitIdle }
        // The sends under way may all be slow ones: new and deferred pushes must not wait for them.
        guard hasRoomToClaim && !wakePending else { return .awaitEvent(startingWakeup: false) }
        wakePending = true
        return .awaitEvent(startingWakeup: true)
    }

    /// A commit of the waiting outcomes if one is due and none runs, else a tick for the oldest one.
    private mutating func commitEffect(force: Bool) -> Effect {
        guard !committing, !waiting.isEmpty else { return .none }
        guard force || waiting.count >= commitGroup || (inFlight == 0 && ready == 0) else {
            if tickPending { return .none }
            tickPending = true
            return .scheduleCommitTick
        }
        let batch = waiting
        waiting.removeAll(keepingCapacity: true)
        committing = true
        return .startCommit(batch)
    }
}

extension PushLaneStateMachine.Event: Sendable where Outcome: Sendable {}
extension PushLaneStateMachine.Effect: Equatable where Outcome: Equatable {}
extension PushLaneStateMachine.Action: Equatable where Outcome: Equatable {}
