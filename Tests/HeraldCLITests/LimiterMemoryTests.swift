import Foundation
import HeraldTesting
import Testing

/// The per-IP limiter's memory, in a real `herald serve`: clients without number behind a trusted proxy
/// cannot grow it past its table. The time per request is `herald-dev bench limiter`'s to print (a timing
/// asserted here would fail on a loaded machine, not on a slow limiter); this asserts the bound. It
/// drives the release binary when `HERALD_TEST_RELEASE_BINARY` names it: `make check` runs it there,
/// after `make test`, since 150,000 requests to a debug build cost minutes of both cores.
@Suite struct LimiterMemoryTests {
    /// The server's resident memory after 150,000 clients: its own at rest, the limiter's table (8 MiB
    /// at most) and the allocator's slack (64 MiB measured in a debug build), well under this. The old
    /// dictionary held every address seen up to 100,000, then as many as had not refilled.
    static let residentCeiling = 128 * 1_048_576

    @Test func oneHundredFiftyThousandClientsThroughAProxyKeepTheServerUnderItsCeiling() async throws {
        let folder = NSTemporaryDirectory() + "herald-limiter-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try ServerProcess(
            databasePath: folder + "/herald.sqlite", extraArguments: ["--trusted-proxy", "127.0.0.1"],
            binary: try CrashSafetyTests.serverBinary(), rateLimit: "0.001")
        try await server.start()
        defer { server.kill(SIGKILL) }
        let port = server.port
        let clients = 150_000
        let batch = 500
        let atRest = try #require(try await Self.metrics(port: server.port)["process_resident_memory_bytes"])
        // A registration whose body is not JSON, answered by `DeviceRouteFastPath` below Hummingbird:
        // metered first (the same limiter and client address as the router's), then 400, so each
        // request is the limiter's work and little else. Half the clients IPv4, half IPv6 /64s.
        let statuses = await onOwnThread { () -> [Int: Int] in
            guard let connection = try? RawConnection(port: port) else { return [:] }
            var statuses: [Int: Int] = [:]
            for first in stride(from: 0, to: clients, by: batch) {
                var requests = ""
                for client in first..<min(clients, first + batch) {
                    let address =
                        client % 2 == 0
                        ? "198.\(client >> 16 & 0xff).\(client >> 8 & 0xff).\(client & 0xff)"
                        : "2001:db8:\(String(client >> 16, radix: 16)):\(String(client & 0xffff, radix: 16))::1"
                    requests += Self.request(from: address)
                }
                guard connection.send(requests) else { break }
                for status in Self.statusCodes(of: min(batch, clients - first), on: connection) {
                    statuses[status, default: 0] += 1
                }
            }
            return statuses
        }
        #expect(statuses == [400: clients], "every client had a token")
        let metrics = try await Self.metrics(port: port)
        let resident = try #require(metrics["process_resident_memory_bytes"])
        print(
            "herald serve: \(Int(atRest) / 1_048_576) MiB resident at rest, \(Int(resident) / 1_048_576) MiB after "
                + "\(clients) clients")
        #expect(Int(resident) < Self.residentCeiling)
        // The limiter is on, and still knows a client that spent its burst.
        let hot = await onOwnThread { () -> [Int] in
            guard let connection = try? RawConnection(port: port) else { return [] }
            connection.send(String(repeating: Self.request(from: "203.0.113.9"), count: 201))
            return Self.statusCodes(of: 201, on: connection)
        }
        #expect(hot.count == 201 && hot.prefix(200).allSatisfy { $0 == 400 } && hot.last == 429)
    }

    /// The status codes of the next `count` answers, found by their status lines as bytes arrive (each
    /// byte looked at once: `RawConnection.statusCodes` parses all it has on every read, too slow for
    /// 150,000 answers). These answers' bodies are short JSON that never holds a status line.
    static func statusCodes(of count: Int, on connection: RawConnection) -> [Int] {
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(
            connection.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let marker = Array("HTTP/1.1 ".utf8)
        var pending: [UInt8] = []
        var codes: [Int] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while codes.count < count {
            let received = recv(connection.descriptor, &buffer, buffer.count, 0)
            guard received > 0 else { break }
            pending += buffer[..<received]
            var index = 0
            while index + marker.count + 3 <= pending.count {
                if pending[index] == marker[0] && Array(pending[index..<(index + marker.count)]) == marker {
                    let digits = pending[(index + marker.count)..<(index + marker.count + 3)]
                    codes.append(Int(String(decoding: digits, as: UTF8.self)) ?? 0)
                    index += marker.count + 3
                } else {
                    index += 1
                }
            }
            pending.removeFirst(index)
        }
        return codes
    }

    static func request(from address: String) -> String {
        "POST /v1/devices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1\r\n"
            + "X-Forwarded-For: \(address)\r\n\r\nx"
    }

    static func metrics(port: Int) async throws -> [String: Double] {
        let text = await onOwnThread { () -> String in
            guard let connection = try? RawConnection(port: port) else { return "" }
            connection.send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return connection.answer(within: 10)
        }
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }
}
