import HeraldCore

/// A PostgreSQL connection URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE]`
/// (`postgresql://` too). User, password and database are percent-decoded; an IPv6 host is written in
/// brackets. `description` is `redacted`, so a URL printed in a log or an error never shows its password.
public struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
    /// libpq's `sslmode` values that Herald supports.
    public enum SSLMode: String, Sendable, Hashable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS when the server offers it, else plain; the certificate is not verified (as libpq).
        case prefer
        /// TLS or no connection; the certificate is not verified (as libpq: it guards against
        /// eavesdropping, not against an active attacker).
        case require
        /// TLS, with the server's certificate verified against the system's roots and its host name.
        case verifyFull = "verify-full"
    }

    public let user: String
    public let password: String?
    public let host: String
    public let port: Int
    public let database: String
    public let sslMode: SSLMode

    public static let defaultPort = 5432

    public init(
        user: String, password: String? = nil, host: String, port: Int = defaultPort, database: String,
        sslMode: SSLMode = .prefer
    ) {
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.database = database
        self.sslMode = sslMode
    }

    /// Parses a URL; a malformed one throws a `PostgresURLError` naming the part that is wrong. Errors
    /// repeat no part of the URL: with an unencoded `/`, `?` or `@` in it, any part could hold some of
    /// the password.
    public init(_ text: String) throws(PostgresURLError) {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else {
            throw PostgresURLError("expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        }
        let scheme = text[..<colon].lowercased()
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw PostgresURLError("the scheme must be postgres:// or postgresql://")
        }
        var rest = text[colon...].dropFirst(3)
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        guard let slash = rest.firstIndex(of: "/") else { throw PostgresURLError("no /DATABASE after the host") }
        let authority = rest[..<slash]
        let path = rest[rest.index(after: slash)...]

        // The last @ ends the user information: a password may hold an unencoded @.
        guard let at = authority.lastIndex(of: "@") else {
            throw PostgresURLError("no USER@ before the host (Herald needs a role name)")
        }
        let userInfo = authority[..<at]
        let hostPort = authority[authority.index(after: at)...]
        if let colon = userInfo.firstIndex(of: ":") {
            user = try Self.decode(userInfo[..<colon], "user")
            password = try Self.decode(userInfo[userInfo.index(after: colon)...], "password")
        } else {
            user = try Self.decode(userInfo, "user")
            password = nil
        }
        guard !user.isEmpty else { throw PostgresURLError("the user is empty") }
        (host, port) = try Self.hostAndPort(hostPort)
        database = try Self.decode(path, "database")
        guard !database.isEmpty, !database.contains("/") else {
            throw PostgresURLError("expected one database name after the host")
        }
        sslMode = try Self.sslMode(query)
    }

    /// The URL with its password replaced by `***`: safe to log.
    public var redacted: String { rendered(password: password == nil ? nil : "***") }

    public var description: String { redacted }

    /// The whole URL, password included: for connecting, never for printing.
    var unredacted: String { rendered(password: password.map(Self.encode)) }

    private func rendered(password: String?) -> String {
        let userInfo = Self.encode(user) + (password.map { ":" + $0 } ?? "")
        let hostText = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(userInfo)@\(hostText):\(port)/\(Self.encode(database))?sslmode=\(sslMode.rawValue)"
    }

    private static func hostAndPort(_ text: Substring) throws(PostgresURLError) -> (String, Int) {
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw PostgresURLError("an IPv6 host lacks its ]") }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw PostgresURLError("unexpected text after the IPv6 host") }
                portText = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = text
        }
        guard !host.isEmpty else { throw PostgresURLError("the host is empty") }
        guard host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":" || $0 == "_" })
        else { throw PostgresURLError("the host is not a host name or an IP address") }
        guard let portText else { return (String(host), defaultPort) }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw PostgresURLError("the port must be a number in 1…65535")
        }
        return (String(host), port)
    }

    private static func sslMode(_ query: Substring) throws(PostgresURLError) -> SSLMode {
        var mode = SSLMode.prefer
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0]
            let value = parts.count > 1 ? parts[1] : ""
            guard name == "sslmode" else {
                throw PostgresURLError("unsupported parameter (only sslmode is understood)")
            }
            guard let parsed = SSLMode(rawValue: String(value)) else {
                let known = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw PostgresURLError("sslmode must be one of \(known)")
            }
            mode = parsed
        }
        return mode
    }

    /// Percent-decoding as URLs do, strictly: a bad escape or invalid UTF-8 is an error naming the part.
    private static func decode(_ text: Substring, _ part: String) throws(PostgresURLError) -> String {
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.popFirst().flatMap(Hex.nibbleValue),
                let low = utf8.popFirst().flatMap(Hex.nibbleValue)
            else {
                throw PostgresURLError("the \(part) has a bad percent escape")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw PostgresURLError("the \(part) is not UTF-8 once percent-decoded")
        }
        return decoded
    }

    /// Percent-encodes all but RFC 3986's unreserved characters.
    private static func encode(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A malformed PostgreSQL URL. The message names what is wrong, never the password.
public struct PostgresURLError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String

    init(_ reason: String) { description = "bad PostgreSQL URL: \(reason)" }
}
