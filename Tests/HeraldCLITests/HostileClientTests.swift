import Foundation
import HeraldTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Clients that hold the server without finishing anything, against a real `herald serve`.
@Suite(.serialized) struct HostileClientTests {

    func start(_ arguments: [String]) async throws -> ServerProcess {
        let server = try ServerProcess(
            databasePath: NSTemporaryDirectory() + "herald-hostile-\(UUID().uuidString)/herald.sqlite",
            extraArguments: arguments)
        try await server.start()
        return server
    }

    @Test func aSlowLorisIsCutOffWhileOthersAreServed() async throws {
        let server = try await start(["--request-timeout", "2"])
        defer { server.kill(SIGKILL) }
        let slow = try RawConnection(port: server.port)
        slow.send("POST /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        // A byte of header every half second: never idle, never finished. With a 2 s deadline the server
        // cuts it long before the client would give up (15 s); the order, not a wall-clock bound, is
        // checked, so a loaded machine cannot make it flaky.
        var stillOpen = true
        for _ in 0..<30 where stillOpen {
            try await Task.sleep(for: .milliseconds(500))
            stillOpen = slow.send("X")
            #expect(try await HTTP.get(server.baseURL + "/healthz").0 == 200, "others are served meanwhile")
        }
        #expect(!stillOpen, "the server cut the trickle off while it was still going")
        #expect(slow.closedByServer(within: 3), "the trickling connection was closed")
        // A body that never ends is cut off the same way.
        let body = try RawConnection(port: server.port)
        body.send(
            "POST /v1/devices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
        #expect(body.closedByServer(within: 4))
    }

    /// A request refused on its head (here a declared body over the limit: 413) is answered before its
    /// body ends; once the body has ended, the next request has its deadline like any other. (The clock
    /// used to stop when the refused request ended, so the client could then hold the connection idle.)
    @Test func aRequestRefusedOnItsHeadDoesNotStopTheClock() async throws {
        let server = try await start(["--request-timeout", "2"])
        defer { server.kill(SIGKILL) }
        let port = server.port
        let outcome = await onOwnThread { () -> (answer: String, closed: Bool) in
            guard let connection = try? RawConnection(port: port) else { return ("cannot connect", false) }
            let length = 65_537
            connection.send(
                "POST /v1/devices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(length)\r\n\r\n")
            let answer = connection.answer()
            connection.send(String(repeating: " ", count: length))
            // Then nothing: the server must close the idle connection (2 s deadline; 15 s before giving up).
            return (answer, connection.closedByServer(within: 15))
        }
        #expect(outcome.answer.hasPrefix("HTTP/1.1 413"), "refused at once: \(outcome.answer.prefix(40))")
        #expect(outcome.closed, "the idle connection after the refused request was closed")
    }

    /// The deadline is per request: a keep-alive connection whose requests each arrive in time is served
    /// for longer than the timeout, and a slow request after them is still cut off.
    @Test func eachRequestOfAKeptConnectionHasItsOwnDeadline() async throws {
        let server = try await start(["--request-timeout", "2"])
        defer { server.kill(SIGKILL) }
        let port = server.port
        // The client runs on a thread of its own: on the test runner's cooperative pool, which every test
        // shares, it once waited longer than the timeout between two of its requests.
        let outcome = await onOwnThread { () -> (served: Double, failure: String?, cutOff: Bool) in
            guard let kept = try? RawConnection(port: port) else { return (0, "cannot connect", false) }
            let opened = Date()
            var failure: String?
            // Requests 50 ms apart for 3 s: one and a half times the timeout, none of them late.
            while failure == nil && Date().timeIntervalSince(opened) < 3 {
                if !kept.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") {
                    failure = "closed after \(Date().timeIntervalSince(opened)) s"
                } else if !kept.answer().hasPrefix("HTTP/1.1 200") {
                    failure = "unanswered after \(Date().timeIntervalSince(opened)) s"
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            let served = Date().timeIntervalSince(opened)
            // Then a request that trickles in: cut off like a slow loris's first one (the order is
            // checked, not the time).
            var stillOpen = kept.send("POST /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            for _ in 0..<30 where stillOpen {
                Thread.sleep(forTimeInterval: 0.5)
                stillOpen = kept.send("X")
            }
            return (served, failure, !stillOpen && kept.closedByServer(within: 3))
        }
        #expect(outcome.failure == nil, "\(outcome.failure ?? "")")
        #expect(outcome.served >= 3)
        #expect(outcome.cutOff, "the server cut the slow request off while it was still going")
    }

    /// HTTP framing a client controls: each is a 4xx with the connection closed or a §3 error, never a
    /// 500, and the server goes on serving. (A chunked body past the limit was a 500 until
    /// `NIOTooManyBytesError` was mapped: found by hand with raw sockets.)
    @Test func abusiveFramingIsRefusedWithoutAServerError() async throws {
        let server = try await start([])
        defer { server.kill(SIGKILL) }
        func exchange(_ request: String) throws -> String {
            let connection = try RawConnection(port: server.port)
            connection.send(request)
            return connection.answer()
        }
        let chunk = "10000\r\n" + String(repeating: "a", count: 0x10000) + "\r\n"
        for (path, chunks) in [("/v1/devices", 2), ("/v1/subscriptions", 2), ("/v1/notifications", 9)] {
            let answer = try exchange(
                "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + String(repeating: chunk, count: chunks) + "0\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 413"), "chunked body past the limit on \(path): \(answer.prefix(120))")
            #expect(answer.contains(#""code":"payload_too_large""#), "\(answer.prefix(300))")
        }
        let refused = [
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 200_000) + "\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nHost: x\r\n" + (0..<5000).map { "X-\($0): 1\r\n" }.joined() + "\r\n",
            "GET /" + String(repeating: "a", count: 200_000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
            "POST /v1/devices HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST /v1/devices HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            "POST /v1/devices HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
            "GET /healthz\r\n\r\n",
        ]
        for request in refused {
            let answer = try exchange(request)
            #expect(answer.hasPrefix("HTTP/1.1 4"), "\(request.prefix(60)): \(answer.prefix(120))")
        }
        #expect(try await HTTP.get(server.baseURL + "/healthz").0 == 200, "still serving")
    }

    @Test func connectionsPastTheLimitAreClosedAndTheRestServed() async throws {
        let server = try await start(["--max-connections", "3", "--request-timeout", "20"])
        defer { server.kill(SIGKILL) }
        let held = try (0..<2).map { _ in try RawConnection(port: server.port) }
        try await Task.sleep(for: .milliseconds(200))
        // Two held, one left: a real request still gets through.
        #expect(try await HTTP.get(server.baseURL + "/healthz").0 == 200)
        let third = try RawConnection(port: server.port)
        let fourth = try RawConnection(port: server.port)
        #expect(fourth.closedByServer(within: 3) || third.closedByServer(within: 3), "one past the limit is closed")
        withExtendedLifetime(held) {}
    }
}
