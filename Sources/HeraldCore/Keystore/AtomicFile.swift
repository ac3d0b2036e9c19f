#if canImport(Glibc)
import Glibc
private let posixWrite = Glibc.write
#elseif canImport(Musl)
import Musl
private let posixWrite = Musl.write
#elseif canImport(Darwin)
import Darwin
private let posixWrite = Darwin.write
#endif

/// Writes a file so that a crash leaves either the old state or the whole new file, never half of one:
/// a temporary file in the same folder (created 0600, exclusive), written, fsynced, renamed into
/// place, then the folder fsynced so the rename itself is durable.
public enum AtomicFile {
    public static func write(
        _ bytes: [UInt8], to path: String, permissions: UInt32 = 0o600, replace: Bool = false
    )
        throws(HeraldError)
    {
        let folder = parentFolder(of: path)
        let temporary = folder + "/.tmp-" + Hex.encode(SecureRandom.bytes(8))
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(permissions))
        guard fd >= 0 else { throw ioError("cannot create \(temporary)") }
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { posixWrite(fd, $0.baseAddress, $0.count) }
            if result < 0 {
                if errno == EINTR { continue }
                close(fd)
                unlink(temporary)
                throw ioError("cannot write \(temporary)")
            }
            written += result
        }
        guard fsync(fd) == 0, close(fd) == 0 else {
            unlink(temporary)
            throw ioError("cannot flush \(temporary)")
        }
        if replace {
            guard rename(temporary, path) == 0 else {
                unlink(temporary)
                throw ioError("cannot rename into \(path)")
            }
        } else {
            // link(2) fails with EEXIST atomically, where a check before rename(2) would race.
            let linked = link(temporary, path)
            let linkError = errno
            unlink(temporary)
            guard linked == 0 else {
                if linkError == EEXIST { throw HeraldError(.ioFailure, "\(path) already exists") }
                errno = linkError
                throw ioError("cannot link into \(path)")
            }
        }
        syncFolder(folder)
    }

    /// Deletes `path` and makes the deletion durable.
    public static func remove(_ path: String) throws(HeraldError) {
        guard unlink(path) == 0 else { throw ioError("cannot remove \(path)") }
        syncFolder(parentFolder(of: path))
    }

    /// Creates `path` and missing parents with `permissions`, and tightens an existing folder to them.
    public static func makeFolder(_ path: String, permissions: UInt32 = 0o700) throws(HeraldError) {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, mode_t(permissions)) != 0 && errno != EEXIST {
                throw ioError("cannot create folder \(partial)")
            }
        }
        guard chmod(path, mode_t(permissions)) == 0 else { throw ioError("cannot set permissions on \(path)") }
    }

    /// Runs `body` holding an exclusive flock(2) on `lockPath`, so that two processes changing the
    /// same folder (two `herald wallet create` at once) take turns.
    public static func withExclusiveLock<T>(
        _ lockPath: String, _ body: () throws(HeraldError) -> T
    ) throws(HeraldError) -> T {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, mode_t(0o600))
        guard fd >= 0 else { throw ioError("cannot open lock \(lockPath)") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw ioError("cannot lock \(lockPath)") }
        }
        return try body()
    }

    static func parentFolder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func syncFolder(_ folder: String) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    private static func ioError(_ what: String) -> HeraldError {
        HeraldError(.ioFailure, "\(what): \(String(cString: strerror(errno)))")
    }
}
