import Foundation

/// A folder of keystore files, as geth keeps them: one v3 JSON file per key, named
/// `UTC--<time>--<address>`, files 0600 in a 0700 folder, each written atomically.
/// Herald's wallet name lives inside the file (`"name"`), so name and key never disagree.
public struct KeystoreDirectory: Sendable {
    /// A wallet found in the folder.
    public struct Entry: Sendable, Hashable {
        public let name: String
        public let address: EthereumAddress
        public let path: String
        public let keystore: Keystore
    }

    public let path: String

    public init(path: String) { self.path = path }

    /// What a look at the folder found: the wallets, the files skipped (with why), and warnings about
    /// files that are readable but unsafe.
    public struct Scan: Sendable {
        public var wallets: [Entry] = []
        public var skipped: [(path: String, reason: String)] = []
        public var warnings: [String] = []
    }

    /// The largest file read as a keystore: real ones are about 500 bytes.
    static let maximumFileSize = 64 * 1024

    /// Every readable wallet, sorted by name. One stray or hostile file never hides the others; it is
    /// skipped and reported: not a keystore, too large, not a regular file, or a symbolic link that
    /// leads out of the folder (never followed: a link could make Herald read, and a later write
    /// replace, a file elsewhere). A keystore that others may read is used, with a warning.
    public func scan() throws(HeraldError) -> Scan {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            if !FileManager.default.fileExists(atPath: path) { return Scan() }
            throw HeraldError(.ioFailure, "cannot read \(path)")
        }
        let folder = Self.realPath(path) ?? path
        var result = Scan()
        for file in names.sorted() where !file.hasPrefix(".") {
            let filePath = path + "/" + file
            var link = stat()
            guard lstat(filePath, &link) == 0 else { continue }
            if (link.st_mode & S_IFMT) == S_IFLNK {
                guard let target = Self.realPath(filePath), target.hasPrefix(folder + "/") else {
                    result.skipped.append((filePath, "a symbolic link out of the keystore folder: not followed"))
                    continue
                }
            }
            var info = stat()
            guard stat(filePath, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                result.skipped.append((filePath, "not a regular file"))
                continue
            }
            guard Int(info.st_size) <= Self.maximumFileSize else {
                result.skipped.append((filePath, "larger than a keystore can be"))
                continue
            }
            guard let data = FileManager.default.contents(atPath: filePath),
                let keystore = try? Keystore(json: Array(data)), let address = keystore.address
            else {
                result.skipped.append((filePath, "not a readable v3 keystore"))
                continue
            }
            let mode = info.st_mode & 0o777
            if mode & 0o077 != 0 {
                result.warnings.append(
                    "\(filePath) can be read by others (mode 0\(String(mode, radix: 8))): run chmod 600 on it")
            }
            result.wallets.append(
                Entry(
                    name: keystore.name ?? Self.fallbackName(address), address: address, path: filePath,
                    keystore: keystore))
        }
        result.wallets.sort { $0.name < $1.name }
        return result
    }

    /// Every readable wallet and the paths skipped (see ``scan()``).
    public func entries() throws(HeraldError) -> (wallets: [Entry], unreadable: [String]) {
        let scan = try scan()
        return (scan.wallets, scan.skipped.map(\.path))
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    public func wallets() throws(HeraldError) -> [Entry] { try entries().wallets }

    /// The wallet called `selector`, or whose address `selector` is (any wallet input form).
    public func wallet(_ selector: String) throws(HeraldError) -> Entry {
        try wallet(selector, among: try wallets())
    }

    /// The wallet called `selector`, or at that address, among wallets already scanned.
    public func wallet(_ selector: String, among all: [Entry]) throws(HeraldError) -> Entry {
        if let byName = all.first(where: { $0.name == selector }) { return byName }
        if let address = try? EthereumAddress(parsing: selector),
            let byAddress = all.first(where: { $0.address == address })
        {
            return byAddress
        }
        throw HeraldError(.walletNotFound, "no wallet named or at \(selector) in \(path)")
    }

    /// `default`, then `default-2`, `default-3`, … : the first name not taken.
    public func nextDefaultName() throws(HeraldError) -> String {
        let taken = Set(try wallets().map(\.name))
        if !taken.contains("default") { return "default" }
        var counter = 2
        while taken.contains("default-\(counter)") { counter += 1 }
        return "default-\(counter)"
    }

    /// Stores a new wallet. Its name must be valid and free, its address not already stored.
    @discardableResult
    public func add(_ keystore: Keystore) throws(HeraldError) -> Entry {
        let now = Date()
        guard let name = keystore.name, Self.isValidName(name) else {
            throw HeraldError(
                .invalidWalletName, "a wallet name is 1-64 letters, digits, '.', '_' or '-', starting with a letter")
        }
        guard let address = keystore.address else { throw HeraldError(.malformedKeystore, "keystore has no address") }
        try AtomicFile.makeFolder(path)
        return try AtomicFile.withExclusiveLock(path + "/.lock") { () throws(HeraldError) -> Entry in
            let existing = try wallets()
            if existing.contains(where: { $0.name == name }) {
                throw HeraldError(.walletExists, "a wallet named \(name) already exists")
            }
            if let same = existing.first(where: { $0.address == address }) {
                throw HeraldError(.walletExists, "wallet \(same.name) already holds \(address)")
            }
            let filePath = path + "/" + Self.gethFileName(address: address, date: now)
            try AtomicFile.write(Array(keystore.jsonText.utf8), to: filePath)
            return Entry(name: name, address: address, path: filePath, keystore: keystore)
        }
    }

    /// Deletes a wallet's file.
    public func remove(_ entry: Entry) throws(HeraldError) {
        try AtomicFile.remove(entry.path)
    }

    /// Letters, digits, `.`, `_`, `-`; starting with a letter (so a name never looks like an address).
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 64,
            ("a"..."z").contains(first) || ("A"..."Z").contains(first)
        else { return false }
        return name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "_"
                || $0 == "-"
        }
    }

    /// geth: `UTC--2006-01-02T15-04-05.999999999Z--<address hex>`.
    static func gethFileName(address: EthereumAddress, date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        let whole = Int64(seconds.rounded(.down))
        let nanos = Int64(((seconds - Double(whole)) * 1e9).rounded())
        var time = time_t(whole)
        var parts = tm()
        gmtime_r(&time, &parts)
        let stamp = String(
            format: "%04d-%02d-%02dT%02d-%02d-%02d.%09lldZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, nanos)
        return "UTC--\(stamp)--\(Hex.encode(address.bytes))"
    }

    /// A name for a keystore that carries none (dropped in by hand, from geth or MetaMask).
    static func fallbackName(_ address: EthereumAddress) -> String { "wallet-" + Hex.encode(address.bytes.prefix(4)) }
}
