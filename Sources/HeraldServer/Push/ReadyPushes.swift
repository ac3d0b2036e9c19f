import HeraldStore

/// The pushes a lane claimed ahead and has not sent yet, oldest first, each with the moment its claim
/// answered.
struct ReadyPushes {
    struct Held {
        let push: QueuedPush
        let readySince: ContinuousClock.Instant
    }

    private var held: [Held] = []
    private var head = 0

    var count: Int { held.count - head }

    mutating func append(_ pushes: [QueuedPush], readySince: ContinuousClock.Instant) {
        // Drop what was taken once it is half the array, so the array holds little more than what is
        // ready however long the lane runs without emptying it (amortized: each push is moved once).
        if head > 0 && head * 2 >= held.count {
            held.removeFirst(head)
            head = 0
        }
        held.append(contentsOf: pushes.map { Held(push: $0, readySince: readySince) })
    }

    /// The next `count` held pushes (fewer if fewer are held), removed.
    mutating func take(_ count: Int) -> ArraySlice<Held> {
        let end = min(held.count, head + max(0, count))
        defer { head = end }
        return held[head..<end]
    }

    /// How long a push may wait here and still have its lease cover a whole send (`push.sendDeadline`):
    /// the lease less the send and a second (leases are set in whole seconds). Nil when that leaves less
    /// than a second: the lane then claims no more than it can send at once (a test's 5 s lease).
    static func holdLimit(leaseSeconds: Int64, sendDeadline: Duration) -> Duration? {
        let room = Duration.seconds(leaseSeconds) - sendDeadline - .seconds(1)
        return room >= .seconds(1) ? room : nil
    }
}
