/// The decisions of one push outbox lane, apart from the work that carries them out: the lane's loop in
/// `PushOutboxService` feeds in what happened (a claim came back, a send, a commit or a timer ended,
/// shutdown began) and runs the action that comes back (claim, start a commit, wait). No clock, no I/O
/// and no concurrency here, so that each rule below is tested by feeding events alone; the shape is
/// AsyncHTTPClient's connection pool state machine. `Outcome` is what a send ends with, opaque here.
///
/// The rules, each of which once was a bug:
/// - Up to `batchSize` sends are in flight, refilled by claiming once at most half are, so that one
///   slow answer never holds up the others.
/// - Outcomes are committed in groups, one commit at a time: a group goes once `commitGroup` outcomes
///   wait, when the lane falls idle, or when its oldest outcome waited the commit delay. Without the
///   time bound a lane under light load left outcomes unrecorded until it fell idle, and a crash sent
///   them all again.
/// - While sends run, a wake-up task waits for a signal, so new and deferred pushes need not wait for
///   slow sends; the lane waits idle itself only when no such task waits already (the signal would go
///   to that task, and the idle wait would sit out the idle poll).
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
    }

    /// What to do now: first the effect, then the step, which ends in the lane's next event.
    struct Action {
        let effect: Effect
        let next: Step
    }

    enum Effect {
        case none
        /// Record these outcomes, then report `Event.committed`. The write must run to its end even
        /// when shutdown cancels the lane: it records what was already sent.
        case startCommit([Outcome])
        /// Report `Event.commitDelayElapsed` once the commit delay has passed.
        case scheduleCommitTick
        /// Claiming has now failed this many times in a row.
        case logClaimFailure(tries: Int)
        /// Claiming works again after this many failures.
        case logClaimRecovered(afterTries: Int)
    }

    enum Step: Equatable {
        /// Claim up to `limit` due pushes, start a send for each, then report `claimed(_:)` or
        /// `claimFailed()`.
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
    private let commitGroup: Int
    private let claimFailuresPerLog: Int

    private var inFlight = 0
    /// Outcomes no commit has taken yet.
    private var waiting: [Outcome] = []
    private var committing = false
    private var tickPending = false
    private var wakePending = false
    private var claimFailures = 0
    private var shuttingDown = false

    init(batchSize: Int, commitGroup: Int, claimFailuresPerLog: Int) {
        self.batchSize = batchSize
        self.commitGroup = commitGroup
        // At least one: it divides the failure count.
        self.claimFailuresPerLog = max(1, claimFailuresPerLog)
    }

    /// The lane's first step.
    mutating func start() -> Action {
        Action(effect: .none, next: nextStep())
    }

    /// The claim started `count` sends.
    mutating func claimed(_ count: Int) -> Action {
        inFlight += count
        let effect: Effect = claimFailures > 0 ? .logClaimRecovered(afterTries: claimFailures) : .none
        claimFailures = 0
        return Action(effect: effect, next: stepAfterClaim())
    }

    mutating func claimFailed() -> Action {
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
        }
        return Action(effect: commitEffect(force: dueByTime), next: nextStep())
    }

    /// From now on nothing is claimed and no wake-up task starts; the lane finishes once every task it
    /// started has reported. Harmless to repeat.
    mutating func shutdownRequested() -> Action {
        shuttingDown = true
        return Action(effect: .none, next: nextStep())
    }

    /// Claim while at most half the batch is in flight, then see about waiting.
    private mutating func nextStep() -> Step {
        if !shuttingDown && inFlight <= batchSize / 2 { return .claim(limit: batchSize - inFlight) }
        return stepAfterClaim()
    }

    private mutating func stepAfterClaim() -> Step {
        if shuttingDown {
            let tasksLeft = inFlight > 0 || committing || tickPending || wakePending
            return tasksLeft ? .awaitEvent(startingWakeup: false) : .finished
        }
        if inFlight == 0 && !committing && !wakePending { return .waitIdle }
        // The sends under way may all be slow ones: new and deferred pushes must not wait for them.
        guard inFlight <= batchSize / 2 && !wakePending else { return .awaitEvent(startingWakeup: false) }
        wakePending = true
        return .awaitEvent(startingWakeup: true)
    }

    /// A commit of the waiting outcomes if one is due and none runs, else a tick for the oldest one.
    private mutating func commitEffect(force: Bool) -> Effect {
        guard !committing, !waiting.isEmpty else { return .none }
        guard force || waiting.count >= commitGroup || inFlight == 0 else {
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
