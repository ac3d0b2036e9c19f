import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldTesting
import HummingbirdTesting
import NIOCore
import Testing

/// `POST /v1/devices` is answered below Hummingbird on a live server (`DeviceRouteFastPath`), by the
/// route through the router everywhere else: both must give the same answers.
@Suite struct DeviceRouteFastPathTests {
    typealias F = ServerFixture

    /// What a client can tell of an answer, but for its date.
    struct Answer: Equatable, CustomStringConvertible {
        let status: Int
        let contentType: String?
        var retryAfter: String?
        let idempotentReplay: String?
        let body: String

        init(_ response: TestResponse) {
            status = response.status.code
            contentType = response.headers[.contentType]
            retryAfter = response.headers[.retryAfter]
            idempotentReplay = response.headers[.idempotentReplay]
            body = response.text
        }

        var description: String {
            "\(status) \(contentType ?? "-") \(retryAfter ?? "-") \(idempotentReplay ?? "-") \(body)"
        }
    }

    /// A sequence of requests that goes through every answer the route gives.
    static func exchange(_ client: any TestClientProtocol) async throws -> [Answer] {
        let registration = try F.signed(F.binding(nonce: 1))
        var answers: [Answer] = []
        func post(_ body: String, contentType: String? = "application/json") async throws {
            answers.append(Answer(try await client.post(body, contentType: contentType)))
        }
        try await post(registration)
        try await post(registration)  // the same again: its answer, Idempotent-Replay: true
        try await post(try F.signed(F.binding(nonce: 1), scheme: .eip191))  // another operation: 409
        try await post(try F.signed(F.binding(nonce: 2)), contentType: "application/json; charset=utf-8")
        try await post(try F.signed(F.binding(.unregister, nonce: 3)))
        try await post(try F.signed(F.binding(.unregister, nonce: 4)))  // absent
        try await post(try F.signed(F.binding(nonce: 5), by: F.other))  // signed by someone else: 401
        try await post(try F.signed(F.binding(nonce: 6, expiresAt: F.now - 1)))  // expired
        try await post(#"{"op":"x"}"#)
        try await post("not json")
        try await post(registration, contentType: nil)
        try await post(registration, contentType: "text/plain")
        try await post(String(repeating: " ", count: 65_537))  // over the body limit: 413
        return answers
    }

    @Test func theLiveServerAnswersAsTheRouterDoes() async throws {
        let (expected, answered) = try await Self.exchangeBothWays { _ in }
        #expect(expected.map(\.status) == [200, 200, 409, 200, 200, 200, 401, 401, 400, 400, 415, 415, 413])
        #expect(expected.map { $0.idempotentReplay != nil } == [false, true] + Array(repeating: false, count: 11))
        #expect(expected[1].body == expected[0].body)
        #expect(answered == expected)
    }

    /// `exchange` through the router, then through a live server, each on a database of its own.
    static func exchangeBothWays(
        _ configure: @escaping (inout HeraldSettings) -> Void
    ) async throws -> (routed: [Answer], live: [Answer]) {
        let routed = Answers()
        try await F(configure: configure).test { client in await routed.set(try await exchange(client)) }
        let live = Answers()
        try await F(configure: {
            configure(&$0)
            $0.http.port = 0
        }).testLive { client in await live.set(try await exchange(client)) }
        return (await routed.value, await live.value)
    }

    @Test func rateLimitedAlikeWithItsRetryAfter() async throws {
        // One token in 1,000 s after the first two: none comes back while the test runs, however slowly.
        let (expected, answered) = try await Self.exchangeBothWays {
            $0.http.rateLimit = 0.001
            $0.http.rateBurst = 2
        }
        #expect(expected.prefix(3).map(\.status) == [200, 200, 429])
        // Retry-After counts down with the clock, so only its presence and range are compared.
        for answer in answered where answer.status == 429 {
            #expect(answer.retryAfter.flatMap(Int.init).map { (1...1000).contains($0) } == true, "\(answer)")
        }
        func withoutWait(_ answers: [Answer]) -> [Answer] {
            answers.map { answer in
                var answer = answer
                answer.retryAfter = answer.retryAfter.map { _ in "given" }
                return answer
            }
        }
        #expect(withoutWait(answered) == withoutWait(expected))
    }

    @Test func itsAnswersCarryDateAndServer() async throws {
        try await F(configure: { $0.http.port = 0 }).testLive { client in
            let response = try await client.post(try F.signed(F.binding(nonce: 1)))
            #expect(response.status == .ok)
            #expect(response.headers[.server] == "herald")
            let date = try #require(response.headers[.date])
            let parser = DateFormatter()
            parser.locale = Locale(identifier: "en_US_POSIX")
            parser.timeZone = TimeZone(identifier: "GMT")
            parser.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let parsed = try #require(parser.date(from: date), "an IMF-fixdate: \(date)")
            #expect(abs(parsed.timeIntervalSinceNow) < 120)
        }
    }

    /// Requests pipelined behind one answered here are answered after it, in order, whichever answers
    /// them; and the request metrics count the ones answered here.
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await F(configure: { $0.http.port = 0 }).testLive { client in
            let port = try #require(client.port)
            let registration = try F.signed(F.binding(nonce: 1))
            let pipelined =
                Self.post(registration) + "GET /v1/info HTTP/1.1\r\nHost: x\r\n\r\n" + Self.post(registration)
                + Self.post(#"{"op":"x"}"#)
            let statuses = await onOwnThread { () -> [Int] in
                guard let connection = try? RawConnection(port: port) else { return [] }
                connection.send(pipelined)
                // 30 s without a byte, not 10: in a full parallel run on two cores the first answer (a
                // signature recovery behind a busy executor) once took longer than 10 s to start.
                return connection.statusCodes(of: 4, within: 30)
            }
            #expect(statuses == [200, 200, 200, 400])
            let metrics = try await client.get("/metrics").text
            #expect(metrics.contains(#"herald_http_requests_total{route="/v1/devices",method="POST",status="200"} 2"#))
            #expect(metrics.contains("\nherald_idempotent_replays_total 1\n"))
        }
    }

    static func post(_ body: String) -> String {
        "POST /v1/devices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            + body
    }

}

/// Answers collected inside a test client's closure.
actor Answers {
    var value: [DeviceRouteFastPathTests.Answer] = []
    func set(_ answers: [DeviceRouteFastPathTests.Answer]) { value = answers }
}
