import Foundation
import HeraldCLISupport

#if canImport(Glibc)
import Glibc
#endif

/// Asks the kernel for a free TCP port on `host` by binding port 0 and reading what it chose.
enum FreePort {
    static func find(host: String) throws -> Int {
        if host.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { throw badHost(host) }
            try bindToAnyPort(&address, family: AF_INET6, host: host)
            return Int(UInt16(bigEndian: address.sin6_port))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else {
            throw badHost(host)
        }
        try bindToAnyPort(&address, family: AF_INET, host: host)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Binds a socket to `address` (port 0) and writes back the address the kernel assigned.
    private static func bindToAnyPort<Address>(_ address: inout Address, family: Int32, host: String) throws {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CLIError(.unexpected, "cannot open a socket to find a free port") }
        defer { close(fd) }
        var length = socklen_t(MemoryLayout<Address>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw CLIError(.unexpected, "cannot bind \(host) to find a free port") }
    }

    private static func badHost(_ host: String) -> CLIError {
        CLIError(.usage, "--port 0 without --audience needs a numeric --host (got \(host)); or give --audience")
    }
}
