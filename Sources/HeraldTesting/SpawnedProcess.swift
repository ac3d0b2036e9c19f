public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for the tests and the benchmarks, in place of
/// Foundation's `Process`.
///
/// Why not `Process`: the toolchain's swift-corelibs-foundation crashes in `Process.run()` now and
/// then (SIGSEGV in memcpy): to close the parent's descriptors in the child it reads `/proc/self/fd`
/// and copies each entry's whole 256-byte `d_name`, past the end of glibc's buffer
/// (swift-corelibs-foundation#5472). A suite that starts hundreds of children met it about once in
/// five runs. Here glibc's own `posix_spawn_file_actions_addclosefrom_np` closes them instead.
///
/// The properties a test sets are `Process`'s, so that a call site only changes the type:
/// `standardInput`, `standardOutput` and `standardError` take a `Pipe`, a `FileHandle`
/// (`FileHandle.nullDevice` included) or nil for the parent's own.
public final class SpawnedProcess: @unchecked Sendable {
    public var executableURL: URL?
    public var arguments: [String]?
    /// The child's whole environment; nil for the parent's.
    public var environment: [String: String]?
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?

    private let lock = NSLock()
    private var pid: pid_t = 0
    /// The raw `waitpid` status once the child has been reaped.
    private var reapedStatus: Int32?

    public init() {}

    public var processIdentifier: Int32 { lock.withLock { pid } }

    public struct SpawnFailure: Error, CustomStringConvertible {
        public let description: String
    }

    public func run() throws {
        guard let executable = executableURL?.path else { throw SpawnFailure(description: "no executable set") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        let streams = [(standardInput, STDIN_FILENO), (standardOutput, STDOUT_FILENO), (standardError, STDERR_FILENO)]
        var childEnds: [FileHandle] = []
        for (stream, target) in streams {
            guard let stream else { continue }
            let handle: FileHandle
            switch stream {
            case let pipe as Pipe:
                handle = target == STDIN_FILENO ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                if !childEnds.contains(where: { $0 === handle }) { childEnds.append(handle) }
            case let file as FileHandle:
                handle = file
            default:
                throw SpawnFailure(description: "a standard stream must be a Pipe or a FileHandle")
            }
            // FileHandle.nullDevice has no descriptor of its own (-1).
            if handle === FileHandle.nullDevice || handle.fileDescriptor < 0 {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0)
            } else {
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            }
        }
        // Nothing else of the parent's reaches the child: another test's pipe kept open by this child
        // would hold that test's read back from its end.
        guard let closeFrom = Self.addCloseFrom, closeFrom(&actions, STDERR_FILENO + 1) == 0 else {
            throw SpawnFailure(description: "this C library cannot close a child's inherited descriptors")
        }

        // Ignored signals and the signal mask survive exec: the child starts with the defaults instead
        // of the test process's (which ignores SIGPIPE).
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = [executable] + (arguments ?? [])
        let environment = (self.environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var child: pid_t = 0
        let result = Self.withCStrings(argv) { argv in
            Self.withCStrings(environment) { envp in
                posix_spawn(&child, executable, &actions, &attributes, argv, envp)
            }
        }
        guard result == 0 else {
            throw SpawnFailure(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        lock.withLock { pid = child }
        // The child holds its own copies now; the parent's must go, or a reader never sees the end.
        for handle in childEnds { try? handle.close() }
    }

    public var isRunning: Bool {
        lock.withLock {
            guard pid > 0 else { return false }
            return reapLocked(options: WNOHANG) == nil
        }
    }

    public func waitUntilExit() {
        let child = processIdentifier
        guard child > 0 else { return }
        // Waits without reaping, outside the lock, so that `isRunning` answers meanwhile; then reaps.
        var info = siginfo_t()
        while waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        lock.withLock { _ = reapLocked(options: 0) }
    }

    /// The exit code, or the signal's number for a child killed by one (as `Process` answers).
    public var terminationStatus: Int32 {
        lock.withLock {
            guard let status = reapedStatus else { return -1 }
            let signal = status & 0x7f
            return signal == 0 ? (status >> 8) & 0xff : signal
        }
    }

    /// True when the child ended by a signal.
    public var wasSignalled: Bool {
        lock.withLock {
            guard let status = reapedStatus else { return false }
            return status & 0x7f != 0
        }
    }

    public func terminate() { signal(SIGTERM) }
    public func interrupt() { signal(SIGINT) }

    private func signal(_ number: Int32) {
        lock.withLock {
            guard pid > 0, reapedStatus == nil else { return }
            _ = kill(pid, number)
        }
    }

    /// The child's status once it has exited, reaping it; nil while it runs.
    private func reapLocked(options: Int32) -> Int32? {
        if let reapedStatus { return reapedStatus }
        var status: Int32 = 0
        while true {
            let answer = waitpid(pid, &status, options)
            if answer == pid {
                reapedStatus = status
                return status
            }
            if answer == 0 { return nil }
            if errno == EINTR { continue }
            // ECHILD: reaped elsewhere (nothing else here waits for it); counted as gone.
            reapedStatus = 0
            return 0
        }
    }

    /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, looked up at run time: Swift's Glibc module
    /// is built without `_GNU_SOURCE`, which its declaration needs.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    private static func withCStrings<R>(
        _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
    ) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }
}
