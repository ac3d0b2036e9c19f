#if canImport(Glibc)
import Glibc
#endif

/// The group-commit writer's thread runs ahead of the threads that handle requests.
///
/// Every write waits for the writer's next commit, and under load the writer waited for a core behind
/// the event loops' signature checks for about a third of its time (measured from its
/// `/proc/…/schedstat`): each commit, and so each waiting request, took that much longer. Ten nice
/// levels above the thread that starts it (about nine times its CPU weight), the writer is scheduled as
/// soon as it can run: in alternated runs at 11,000 registrations a second, a write waited 1.5 ms for
/// its commit instead of 2.6 ms and the rate rose by 3–8%.
///
/// Raising a priority takes root, `CAP_SYS_NICE` or an `RLIMIT_NICE` that allows it (systemd's
/// `LimitNICE=-15`, as `ops/systemd/herald.service` sets). Without any of them the writer raises it as
/// far as the limit allows, possibly not at all, and works as before.
enum WriterThreadPriority: Sendable, Equatable {
    /// The calling thread now runs at nice `to`, from `from`.
    case raised(from: Int32, to: Int32)
    /// Left at `nice`: not permitted, or not Linux.
    case unchanged(nice: Int32)

    /// Nice levels the writer asks to be above the thread that started it.
    static let levels: Int32 = 10

    /// Raises the calling thread's priority by `levels` nice levels, or as far as permitted.
    static func raiseCurrentThread() -> WriterThreadPriority {
        #if os(Linux)
        // On Linux the nice value belongs to a thread, and PRIO_PROCESS with 0 names the calling one:
        // the rest of the process keeps its own.
        errno = 0
        let current = getpriority(which, 0)
        guard errno == 0 else { return .unchanged(nice: 0) }
        let wanted = max(-20, current - levels)
        if setpriority(which, 0, wanted) == 0 { return .raised(from: current, to: wanted) }
        // Unprivileged: an RLIMIT_NICE soft limit r allows down to 20 - r.
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(__RLIMIT_NICE.rawValue), &limit) == 0, limit.rlim_cur <= 40 else {
            return .unchanged(nice: current)
        }
        let allowed = max(wanted, 20 - Int32(limit.rlim_cur))
        guard allowed < current, setpriority(which, 0, allowed) == 0 else { return .unchanged(nice: current) }
        return .raised(from: current, to: allowed)
        #else
        return .unchanged(nice: 0)
        #endif
    }

    #if os(Linux)
    private static let which = __priority_which_t(PRIO_PROCESS.rawValue)
    #endif
}
