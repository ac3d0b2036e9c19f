import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Asks the kernel for a free TCP port on `host` by binding port 0 and reading what it chose.
enum FreePort {
    static func find(host: String) throws -> Int {
        let isIPv6 = host.contains(":")
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CLIError(.unexpected, "cannot open a socket to find a free port") }
        defer { close(fd) }
        var port: UInt16 = 0
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { throw badHost(host) }
            var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
                }
            }
            guard bound else { throw CLIError(.unexpected, "cannot bind \(host) to find a free port") }
            port = UInt16(bigEndian: address.sin6_port)
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            let resolved = host == "localhost" ? "127.0.0.1" : host
            guard inet_pton(AF_INET, resolved, &address.sin_addr) == 1 else { throw badHost(host) }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
                }
            }
            guard bound else { throw CLIError(.unexpected, "cannot bind \(host) to find a free port") }
            port = UInt16(bigEndian: address.sin_port)
        }
        return Int(port)
    }

    private static func badHost(_ host: String) -> CLIError {
        CLIError(.usage, "--port 0 without --audience needs a numeric --host (got \(host)); or give --audience")
    }
}
