import Foundation
public import HeraldCore
public import HeraldRelay
import HeraldStore
import Logging
public import ServiceLifecycle

/// Drains the durable push outbox: takes due pushes, hands each to its platform's provider, and records
/// what happened. The outbox is the source of truth: a push leaves `queued` only once its outcome is
/// committed, so a crash before that sends it again rather than losing it.
public struct PushOutboxService: Service {
    let state: ServerState
    let providers: PushProviders
    /// Pushes fetched (and in flight) per round.
    let batchSize: Int
    /// How long an idle worker sleeps when no signal comes (retries fall due without one).
    let idlePoll: Duration
    /// Reads each claimed row into what its provider sends.
    let mapping: QueuedPushMapping
    /// How long a claimed push may wait for a send slot; nil: the lease is too short to claim ahead.
    let holdLimit: Duration?
    /// Answers a send that outlived `push.sendDeadline`: one timer for every lane's sends.
    private let sendWatch: DeadlineWatch

    public init(
        state: ServerState, providers: PushProviders, batchSize: Int? = nil, idlePoll: Duration = .seconds(1)
    ) {
        self.state = state
        self.providers = providers
        self.batchSize = batchSize ?? state.configuration.push.concurrency
        self.idlePoll = idlePoll
        mapping = QueuedPushMapping(
            mode: state.configuration.push.content, maxAgeSeconds: state.configuration.push.maxAgeSeconds)
        holdLimit = ReadyPushes.holdLimit(
            leaseSeconds: state.configuration.push.leaseSeconds, sendDeadline: state.configuration.push.sendDeadline)
        sendWatch = DeadlineWatch(tick: DeadlineWatch.tick(for: state.configuration.push.sendDeadline))
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                for lane in PushProviders.lanes { group.addTask { await loop(lane) } }
            }
        }
    }

    /// One lane's worker, pipelined: up to `batchSize` sends in flight, refilled as they finish, so
    /// one slow answer never holds up the others. Outcomes are group-committed in the background, one
    /// commit at a time: a group goes once it has `commitGroup` outcomes, when the lane falls idle, or
    /// when its oldest outcome has waited `commitDelay`, so no outcome waits long to be recorded. (Before
    /// the time bound, a lane under light load left outcomes unrecorded until it fell idle, and a crash
    /// sent them all again.) A push is claimed in the database (`claimDuePushes`) before it is sent, and
    /// the commit of its outcome ends the claim, so no other worker, here or on another node, sends it
    /// meanwhile; if this process dies, the claim lapses after `push.leaseSeconds`.
    ///
    /// `PushLaneStateMachine` decides all of this; the loop only runs what it answers and reports back.
    private func loop(_ platforms: Set<Platform>) async {
        await withTaskGroup(of: LaneTask.self) { group in
            var lane = Lane(
                batchSize: batchSize, claimsAhead: holdLimit != nil, commitGroup: Self.commitGroup,
                claimFailuresPerLog: Self.claimFailuresPerLog, pausesAfterShortClaims: true)
            var ready = ReadyPushes()
            var cursor = ClaimCursor()
            var action = lane.start()
            while true {
                perform(action, platforms: platforms, ready: &ready, in: &group)
                // Shutdown cancels this task. Noticed between steps, it stops the claims and hands back the
                // pushes held ready; the sends under way finish (or fail) and every outcome is recorded
                // before the lane ends.
                if Task.isCancelled {
                    action = lane.shutdownRequested()
                    perform(action, platforms: platforms, ready: &ready, in: &group)
                }
                switch action.next {
                case .claim(let limit):
                    let after = cursor.start(at: .now, limit: limit)
                    group.addTask {
                        // Unstructured, so that shutdown cannot interrupt a claim whose rows are taken.
                        do {
                            let due = try await Task {
                                try await claim(limit: limit, platforms: platforms, after: after)
                            }.value
                            return .claimed(due, at: .now)
                        } catch {
                            return .claimFailed(error)
                        }
                    }
                    action = lane.claimStarted()
                case .waitIdle:
                    await state.pushWakeup.wait(for: platforms, upTo: idlePoll)
                    action = lane.idleWaitEnded()
                case .awaitEvent:
                    // The machine waits only while a task it asked for is under way: an empty group
                    // would leave nothing to wait for.
                    guard let task = await group.next() else { return }
                    switch task {
                    case .event(let event):
                        action = lane.handle(event)
                    case .claimed(let due, let answeredAt):
                        cursor.claimed(due)
                        ready.append(due, readySince: answeredAt)
                        action = lane.claimed(due.count)
                    case .claimFailed(let error):
                        action = lane.claimFailed()
                        if case .logClaimFailure(let tries) = action.effect {
                            state.logger.error("push outbox: cannot claim pushes (\(tries) tries): \(error)")
                        }
                    }
                case .finished:
                    return
                }
            }
        }
    }

    private typealias Lane = PushLaneStateMachine<Delivery>

    /// What a task of a lane reports: an event of its machine, or a claim's answer with when it began.
    private enum LaneTask: Sendable {
        case event(Lane.Event)
        case claimed([QueuedPush], at: ContinuousClock.Instant)
        case claimFailed(any Error)
    }

    /// Starts what `action` asks for beside its step: a commit, a commit tick, sends of the pushes held
    /// ready and hand-backs of them, the wake-up task.
    private func perform(
        _ action: Lane.Action, platforms: Set<Platform>, ready: inout ReadyPushes, in group: inout TaskGroup<LaneTask>
    ) {
        switch action.effect {
        case .none, .logClaimFailure:
            // A claim failure is logged where it was caught, with its error.
            break
        case .logClaimRecovered(let tries):
            state.logger.notice("push outbox: claiming works again after \(tries) failed tries")
        case .startCommit(let batch):
            // Unstructured inside, so that shutdown's cancellation cannot interrupt the write that
            // records what was already sent.
            group.addTask {
                await Task { await commit(batch) }.value
                return .event(.committed)
            }
        case .scheduleCommitTick:
            group.addTask {
                try? await Task.sleep(for: Self.commitDelay)
                return .event(.commitDelayElapsed)
            }
        case .scheduleClaimPause:
            group.addTask {
                try? await Task.sleep(for: Self.claimPause)
                return .event(.claimPauseElapsed)
            }
        }
        for held in ready.take(action.sends) {
            // Held too long for its lease to cover a whole send: sending it now could overlap another
            // node's claim of it once the lease ends. Handed back instead: due again in a second or two.
            if let holdLimit, ContinuousClock.now - held.readySince > holdLimit {
                group.addTask { .event(.delivered(handBack(held.push, reason: "held past its lease's room"))) }
            } else {
                group.addTask { .event(.delivered(await deliver(held.push))) }
            }
        }
        for held in ready.take(action.handBacks) {
            group.addTask { .event(.delivered(handBack(held.push, reason: "handed back at shutdown"))) }
        }
        // Sends under way may all be slow ones (a push service that never answers): new and deferred
        // pushes must not wait for them, so the lane also wakes to claim on a signal or after the idle
        // poll while it has room.
        if action.next == .awaitEvent(startingWakeup: true) {
            group.addTask {
                await state.pushWakeup.wait(for: platforms, upTo: idlePoll)
                return .event(.woken)
            }
        }
    }

    /// A claimed push given back unsent: recorded as deferred (not an attempt), which ends its claim.
    private func handBack(_ push: QueuedPush, reason: String) -> Delivery {
        Delivery(
            push: push, provider: providers.provider(for: push.platform).name, outcome: .deferred(reason: reason),
            duration: .zero)
    }

    /// Outcomes per commit under load, and the longest an outcome waits for a group to fill.
    static let commitGroup = 64
    static let commitDelay = Duration.milliseconds(25)
    /// How long a trickle gathers after a short claim (`PushLaneStateMachine`): the most a push queued
    /// behind a short claim waits for the next.
    static let claimPause = Duration.milliseconds(20)
    /// Failed claims between two log lines (about a minute at the idle poll of one second).
    static let claimFailuresPerLog = 60

    /// Records a group of outcomes. If the write fails, the pushes stay queued and claimed in the
    /// database: once the lease passes they are claimed and sent again (a repeat, never a loss).
    private func commit(_ batch: [Delivery]) async {
        do {
            try await settle(batch, now: state.clock())
        } catch {
            state.logger.error("push outbox: cannot record outcomes, they will be sent again: \(error)")
        }
    }

    /// Claims due pushes for this node until the lease ends (past `after`, when given: `ClaimCursor`).
    private func claim(
        limit: Int, platforms: Set<Platform>?, after: OutboxPosition? = nil
    ) async throws
        -> [QueuedPush]
    {
        guard limit > 0 else { return [] }
        let now = state.clock()
        return try await state.store.claimDuePushes(
            now: now, limit: limit, platforms: platforms, owner: state.nodeID,
            leaseUntil: now + state.configuration.push.leaseSeconds, after: after)
    }

    /// One round: every due push of one batch (of `platforms`, or all), sent concurrently, outcomes
    /// committed together. Returns how many were handled.
    @discardableResult
    public func drainOnce(platforms: Set<Platform>? = nil) async throws -> Int {
        let now = state.clock()
        let due = try await claim(limit: batchSize, platforms: platforms)
        guard !due.isEmpty else { return 0 }
        let deliveries = await withTaskGroup(of: Delivery.self) { group in
            for push in due { group.addTask { await deliver(push) } }
            var results: [Delivery] = []
            for await result in group { results.append(result) }
            return results
        }
        try await settle(deliveries, now: now)
        return due.count
    }

    /// Sends one push, unless its binding is gone (unregistered, or its token died): then it is dropped.
    /// The send is answered within `pushSendDeadline`, which ends before the claim's lease does: a send
    /// still under way when the lease ran out would let this node or another claim the push again and
    /// send it twice. One that runs out of time is retried as a network error. The send runs in a task
    /// of its own, so that one that never ends cannot hold its lane's answer.
    private func deliver(_ push: QueuedPush) async -> Delivery {
        let provider = providers.provider(for: push.platform)
        guard push.bound else { return Delivery(push: push, provider: provider.name, outcome: nil, duration: .zero) }
        // Too late to be worth anything to its reader (§11.4): fails unsent.
        if push.isPastDeadline(now: state.clock(), maxAgeSeconds: mapping.maxAgeSeconds) {
            return Delivery(
                push: push, provider: provider.name, outcome: .failed(reason: "not sent by its deadline"),
                duration: .zero)
        }
        let message = mapping.message(for: push)
        let started = ContinuousClock.now
        let deadline = state.configuration.push.sendDeadline
        let outcome: PushDelivery
        do {
            outcome = try await sendWatch.answer(within: deadline, late: { SendTimedOut() }) { answer in
                let send = Task { answer.resume(returning: await provider.deliver(message)) }
                return { send.cancel() }
            }
        } catch {
            outcome = .retryable(reason: "no answer within \(deadline.components.seconds) s", retryAfter: nil)
        }
        return Delivery(push: push, provider: provider.name, outcome: outcome, duration: ContinuousClock.now - started)
    }

    private struct SendTimedOut: Error {}

    /// Applies outcomes: dead tokens remove their bindings, the retry policy decides, one transaction
    /// records them all, metrics follow.
    private func settle(_ deliveries: [Delivery], now: Int64) async throws {
        let policy = PushRetryPolicy(
            attempts: state.configuration.push.attempts, maxAgeSeconds: state.configuration.push.maxAgeSeconds)
        var results: [PushAttemptResult] = []
        for delivery in deliveries {
            guard let outcome = delivery.outcome else {
                results.append(PushAttemptResult(id: delivery.push.id, disposition: .pruned, error: "binding removed"))
                continue
            }
            if case .deadToken(let reason) = outcome {
                let removed = try await state.store.removeBindings(
                    platform: delivery.push.platform, deviceToken: delivery.push.deviceToken)
                state.logger.info(
                    "dead device token: bindings removed",
                    metadata: [
                        "platform": "\(delivery.push.platform.rawValue)", "reason": "\(reason)",
                        "token": "\(DeviceToken.logPrefix(delivery.push.deviceToken))", "bindings": "\(removed)",
                    ])
            }
            results.append(policy.result(for: delivery.push, outcome, now: now))
        }
        recordLatencies(deliveries)
        try await state.store.record(results, owner: state.nodeID)
        state.pushOutcomes.resolve(results.lazy.map(\.id))
        recordCounts(deliveries, results)
    }

    /// How long each send took, per provider: each series is looked up once per group, not per push.
    private func recordLatencies(_ deliveries: [Delivery]) {
        var latencies: [String: [Duration]] = [:]
        for delivery in deliveries where delivery.wasSent {
            latencies[delivery.provider, default: []].append(delivery.duration)
        }
        for (provider, durations) in latencies {
            state.metrics.recordPushLatencies(provider: provider, durations: durations)
        }
    }

    /// The recorded outcomes, counted per provider and status (one series lookup per pair).
    private func recordCounts(_ deliveries: [Delivery], _ results: [PushAttemptResult]) {
        var counts: [PushCountKey: Int] = [:]
        for (delivery, result) in zip(deliveries, results) {
            let status = !result.isAttempt ? "deferred" : result.status == "queued" ? "retried" : result.status
            counts[PushCountKey(provider: delivery.provider, status: status), default: 0] += 1
        }
        for (key, count) in counts {
            state.metrics.recordPushes(provider: key.provider, status: key.status, count: count)
        }
    }

    private struct PushCountKey: Hashable {
        let provider: String
        let status: String
    }

    private struct Delivery: Sendable {
        let push: QueuedPush
        let provider: String
        /// nil: not sent, its binding is gone.
        let outcome: PushDelivery?
        let duration: Duration

        /// Whether a request went out (a deferred push waited for its service's room instead).
        var wasSent: Bool {
            switch outcome {
            case nil, .deferred?: false
            default: true
            }
        }
    }
}

/// docs/protocol.md §4.3 retries: `min(300 s, base·2^(n−1))·(1 + jitter)`, or `Retry-After` when longer,
/// up to `attempts` sends and the push's deadline (`maxAgeSeconds` after queueing, or its message's `ttl`
/// when shorter, §11.4); past either the push fails, and a push of `ttl` 0 is never retried. A `Retry-After` whose wait ends past the deadline fails the push at once: the service said it
/// will not take it in time. Every sum saturates: the wait is bounded when parsed, but a trap here would
/// stop the server, and since the outcome was never recorded, again after every restart.
struct PushRetryPolicy {
    let attempts: Int
    let maxAgeSeconds: Int64
    var baseSeconds = 1.0

    func result(for push: QueuedPush, _ delivery: PushDelivery, now: Int64) -> PushAttemptResult {
        let deadline = push.deadline(maxAgeSeconds: maxAgeSeconds)
        switch delivery {
        case .sent:
            return PushAttemptResult(id: push.id, disposition: .sent)
        case .failed(let reason):
            return PushAttemptResult(id: push.id, disposition: .failed, error: reason)
        case .deadToken(let reason):
            return PushAttemptResult(id: push.id, disposition: .pruned, error: reason)
        case .deferred(let reason):
            // A second or two, spread so that deferred pushes do not all return at once. Not an attempt:
            // a push of one attempt (ttl 0) still has it, until the max age.
            let at = now.addingSaturated(1 + Int64.random(in: 0...1))
            let until = push.attemptsOnce ? push.queuedAt.addingSaturated(maxAgeSeconds) : deadline
            guard at <= until else {
                return PushAttemptResult(id: push.id, disposition: .failed, error: "\(reason) until its deadline")
            }
            return PushAttemptResult(id: push.id, disposition: .deferred(until: at), error: reason)
        case .retryable(let reason, let retryAfter):
            let made = push.attempts + 1
            if push.attemptsOnce {
                return PushAttemptResult(
                    id: push.id, disposition: .failed, error: "\(reason) (ttl 0: one attempt, no retry)")
            }
            if let retryAfter, now.addingSaturated(max(0, retryAfter)) > deadline {
                return PushAttemptResult(
                    id: push.id, disposition: .failed,
                    error: "\(reason) (asked to wait \(retryAfter) s, past the push's deadline)")
            }
            let backoff = min(300, baseSeconds * pow(2, Double(made - 1))) * (1 + Double.random(in: 0..<1))
            let at = now.addingSaturated(max(Int64(backoff.rounded(.up)), retryAfter ?? 0))
            guard made < attempts, at <= deadline else {
                return PushAttemptResult(
                    id: push.id, disposition: .failed, error: "\(reason) (gave up after \(made) attempt(s))")
            }
            return PushAttemptResult(id: push.id, disposition: .retry(at: at), error: reason)
        }
    }
}
