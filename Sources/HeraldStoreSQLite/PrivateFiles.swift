#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Database folders and files readable by their owner alone, whatever the process umask: the
/// database holds every wallet's device tokens and Web Push keys. Modes are set with `chmod`/`fchmod`
/// after creating, which the umask does not touch. SQLite gives a database's `-wal` and `-shm` the
/// mode of the database file itself, so creating that file 0600 before SQLite opens it covers them.
public enum PrivateFiles {
    /// Creates `folder` and any missing parent 0700; a folder that exists already is left as it is
    /// (its mode is the operator's choice).
    public static func createFolder(_ folder: String) throws(PrivateFileError) {
        guard !folder.isEmpty, !exists(folder) else { return }
        let parent = parentFolder(of: folder)
        if parent != folder { try createFolder(parent) }
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw PrivateFileError("cannot create the folder \(folder): \(errorText())")
        }
        // mkdir's mode went through the umask; chmod's does not.
        if chmod(folder, 0o700) != 0 {
            throw PrivateFileError("cannot make the folder \(folder) private: \(errorText())")
        }
    }

    /// Creates `path` empty and 0600 when it does not exist; an existing file is left as it is.
    public static func createFile(_ path: String) throws(PrivateFileError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            if errno == EEXIST { return }
            throw PrivateFileError("cannot create \(path): \(errorText())")
        }
        defer { close(descriptor) }
        if fchmod(descriptor, 0o600) != 0 {
            throw PrivateFileError("cannot make \(path) private: \(errorText())")
        }
    }

    /// The folder part of `path` ("" for a bare file name, "/" for a file at the root).
    public static func parentFolder(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        if slash == trimmed.startIndex { return "/" }
        return String(trimmed[..<slash])
    }

    static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}

/// A database folder or file that could not be created private.
public struct PrivateFileError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}
