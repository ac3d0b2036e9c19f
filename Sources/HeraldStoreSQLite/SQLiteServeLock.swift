#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One `herald serve` per SQLite file (CLI.md, `--database`): an exclusive `flock` on
/// `<database>.lock`, held while the process lives and released by the kernel when it exits, even
/// after a SIGKILL. A second server on the same file would release the first one's outbox claims
/// and send their pushes again.
///
/// A file of its own, not the database: SQLite locks byte ranges of the database with POSIX
/// (`fcntl`) locks, which a process loses entirely when it closes any descriptor of that file, and
/// which would collide with SQLite's own; a `flock` on a separate file involves neither, so `herald
/// channel …` and `herald installation …` keep working on the database (and its WAL) while the
/// server runs, since they never take this lock.
public final class SQLiteServeLock: Sendable {
    public let lockPath: String
    private let descriptor: Int32

    /// Takes the lock at once or throws naming the file, the lock and, when it wrote it, the other
    /// server's pid. The lock file is created 0600 (``PrivateFiles``); it holds the holder's pid.
    public init(databasePath: String) throws(SQLiteServeLockError) {
        do {
            try PrivateFiles.createFolder(PrivateFiles.parentFolder(of: databasePath))
        } catch {
            throw SQLiteServeLockError(description: "\(error)")
        }
        lockPath = Self.canonical(databasePath) + ".lock"
        do {
            try PrivateFiles.createFile(lockPath)
        } catch {
            throw SQLiteServeLockError(description: "\(error)")
        }
        let opened = open(lockPath, O_RDWR | O_CLOEXEC)
        guard opened >= 0 else {
            throw SQLiteServeLockError(description: "cannot open the lock \(lockPath): \(PrivateFiles.errorText())")
        }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = PrivateFiles.errorText()
            let holder = Self.readHolder(opened)
            close(opened)
            guard busy else {
                throw SQLiteServeLockError(description: "cannot lock \(lockPath): \(reason)")
            }
            let who = holder.map { "herald serve pid \($0)" } ?? "another herald serve"
            throw SQLiteServeLockError(
                description: "\(databasePath) is in use: \(who) holds its lock \(lockPath) (one herald serve per file)")
        }
        descriptor = opened
        Self.writeHolder(opened, pid: getpid())
    }

    deinit { close(descriptor) }

    /// The database's path with symbolic links and `..` resolved, so that two spellings of one file
    /// (a link, a relative path) name one lock; as given when it cannot be resolved.
    static func canonical(_ path: String) -> String {
        if let resolved = resolve(path) { return resolved }
        // Not created yet: its folder exists (created above), and the file will be made in it.
        let folder = PrivateFiles.parentFolder(of: path)
        guard let resolvedFolder = resolve(folder.isEmpty ? "." : folder) else { return path }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return (resolvedFolder == "/" ? "" : resolvedFolder) + "/" + name
    }

    private static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The pid the holder wrote, if the file holds one (it is written after the lock is taken, so a
    /// holder that just started may not have written it yet).
    private static func readHolder(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let digits = String(decoding: buffer.prefix(count), as: UTF8.self).filter(\.isNumber)
        guard let pid = Int32(digits), pid > 0 else { return nil }
        return pid
    }

    private static func writeHolder(_ descriptor: Int32, pid: Int32) {
        // The pid is a courtesy for the second server's message; failing to write it changes nothing.
        let text = Array("\(pid)\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
}

/// The SQLite file is held by another `herald serve`, or its lock could not be made.
public struct SQLiteServeLockError: Error, Sendable, CustomStringConvertible {
    public let description: String
}
