import HeraldCore
import Synchronization

/// Where each push URL goes over HTTP/2: the origin's connection key and target, parsed once per origin,
/// and the URL's path. Parsing every URL whole (`WebPushEndpoint`, Foundation's `URL` among its checks)
/// and spelling its origin again took 6% of a PostgreSQL node's CPU while it drained APNs pushes, whose
/// URLs differ only in the device token at the end of the path.
final class PushRoutes: Sendable {
    struct Origin: Sendable {
        /// The connection pool's key: the RFC 6454 origin.
        let key: String
        let target: HTTP2Connection.Target
    }

    struct Route: Sendable {
        let origin: Origin
        /// `:path`: what follows the authority, query included.
        let path: String
    }

    /// Web Push endpoints bring origins from clients: past this many, the table starts over rather than grow.
    static let capacity = 256

    private let origins = Mutex<[String: Origin]>([:])

    /// The route of an `https://` URL, nil for anything `WebPushEndpoint` refuses (the caller's fallback
    /// sends it). A URL whose origin was seen and whose path holds only plain characters is not parsed again.
    func route(for url: String) -> Route? {
        let scheme = "https://"
        guard url.hasPrefix(scheme) else { return nil }
        let afterScheme = url.utf8.index(url.utf8.startIndex, offsetBy: scheme.utf8.count)
        let authorityEnd =
            url.utf8[afterScheme...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }
            ?? url.utf8.endIndex
        let prefix = String(url[..<authorityEnd])
        let rest = url[authorityEnd...]
        if Self.isPlain(rest.utf8), let known = origins.withLock({ $0[prefix] }) {
            return Route(origin: known, path: rest.hasPrefix("/") ? String(rest) : "/" + rest)
        }
        guard let endpoint = WebPushEndpoint(url) else { return nil }
        let origin = Origin(key: endpoint.origin, target: HTTP2Connection.Target(endpoint: endpoint))
        origins.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[prefix] = origin
        }
        return Route(origin: origin, path: endpoint.path)
    }

    /// The origins held.
    var count: Int { origins.withLock { $0.count } }

    /// Whether a path and query hold only characters RFC 3986 allows there unescaped (unreserved,
    /// sub-delims, `:`, `@`, `/`, `?`): what `WebPushEndpoint` would accept after an origin it accepted.
    /// Anything else, `%` included, goes through the whole parse.
    static func isPlain(_ bytes: Substring.UTF8View) -> Bool {
        bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "-._~!$&'()*+,;=:@/?".utf8.contains(byte)
            }
        }
    }
}
