import HeraldCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// getaddrinfo(3) on a thread pool of its own (never on an event loop): every IPv4 and IPv6 address
/// of a name, each once, in the resolver's order, or a failure once `timeout` has passed.
///
/// Whoever registers an endpoint chooses its name, and so how long its name servers take to answer:
/// getaddrinfo has no timeout of its own and holds its thread meanwhile. A lookup is therefore answered
/// within `timeout` whatever the thread does (the send is retried as a network error, docs/protocol.md
/// §4.3), and blocked lookups hold threads of this pool only, never NIO's shared blocking pool, which
/// file I/O and other work need.
public struct SystemHostResolver: HostResolver {
    let timeout: Duration
    /// The blocking lookup: getaddrinfo, or a stand-in that tests make slow.
    let lookup: @Sendable (String) throws -> [[UInt8]]

    public init(timeout: Duration = .seconds(5)) { self.init(timeout: timeout, lookup: Self.lookup) }

    init(timeout: Duration, lookup: @escaping @Sendable (String) throws -> [[UInt8]]) {
        self.timeout = timeout
        self.lookup = lookup
    }

    /// Lookups under way at once; past it they queue, and a queued lookup's time counts too.
    static let threads = 16
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        return pool
    }()

    public func addresses(of host: String, port: Int) async throws -> [[UInt8]] {
        let (timeout, lookup) = (self.timeout, self.lookup)
        return try await Deadline.race(
            within: timeout,
            late: {
                LookupFailure(description: "cannot resolve \(host): no answer within \(timeout)")
            }
        ) { try await Self.pool.runIfActive { try lookup(host) } }
    }

    struct LookupFailure: Error, CustomStringConvertible {
        let description: String
    }

    static func lookup(_ host: String) throws -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            throw LookupFailure(description: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var found: [[UInt8]] = []
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ai_next }
            guard let socketAddress = entry.pointee.ai_addr else { continue }
            var bytes: [UInt8] = []
            switch entry.pointee.ai_family {
            case AF_INET:
                socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    var address = v4.pointee.sin_addr
                    bytes = withUnsafeBytes(of: &address) { Array($0) }
                }
            case AF_INET6:
                socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    var address = v6.pointee.sin6_addr
                    bytes = withUnsafeBytes(of: &address) { Array($0) }
                }
            default:
                continue
            }
            // Canonical form: an IPv4-mapped IPv6 address is checked as the IPv4 address it maps.
            if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
                bytes = Array(bytes[12...])
            }
            if !found.contains(bytes) { found.append(bytes) }
        }
        return found
    }
}
