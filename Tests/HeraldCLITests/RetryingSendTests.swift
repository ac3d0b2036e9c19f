import HeraldCLISupport
import HeraldCore
import HeraldTesting
import NIOCore
import Testing

/// CLI.md's `send`: one signed envelope, sent again after a timeout or a 5xx, at most three times within
/// its validity, so that a retry is answered the first answer (docs/protocol.md §11.2) and never makes a
/// second message; a refusal is not retried.
@Suite struct RetryingSendTests {
    static let body = #"{"scheme":"eip712","message":{},"signature":"0x00"}"#

    /// `timeout`: the client's bound on an answer. Only the test of a late answer needs it short (the fake
    /// answers after 6 s); elsewhere a first answer slower than the bound would be retried where the test
    /// expects none, and `make test`'s parallel suites once held a local answer past 4 s.
    static func withFake(
        _ script: [FakeAnswer], timeout: TimeAmount = .seconds(30),
        _ body: (FakeHerald, HeraldHTTPClient) async throws -> Void
    ) async throws {
        let fake = FakeHerald()
        fake.enqueue(script)
        try await fake.start()
        var client = try HeraldHTTPClient(server: fake.baseURL)
        client.timeout = timeout
        do { try await body(fake, client) } catch {
            await fake.stop()
            throw error
        }
        await fake.stop()
    }

    static func post(_ client: HeraldHTTPClient, expiresAt: Int64 = .max) async throws -> HeraldHTTPClient.Answer {
        try await client.postOperation("/v1/notifications", json: body, expiresAt: expiresAt, pause: { _ in })
    }

    /// The first copy was applied but its answer came too late: the retry gets it, marked.
    @Test func aTimedOutSendIsAnsweredByItsRetry() async throws {
        try await Self.withFake([.delay(milliseconds: 6_000, then: .accept)], timeout: .seconds(4)) { fake, client in
            let answer = try await Self.post(client)
            #expect(answer.idempotentReplay)
            #expect(answer.json["recipients"] == .number("1"))
            #expect(fake.bodies.count == 2 && Set(fake.bodies).count == 1, "the same bytes twice")
        }
    }

    @Test func fiveHundredsAreRetriedWithTheSameBytes() async throws {
        try await Self.withFake([.reject(status: 503, reason: "unavailable"), .drop]) { fake, client in
            let answer = try await Self.post(client)
            #expect(!answer.idempotentReplay)
            #expect(fake.bodies.count == 3 && Set(fake.bodies).count == 1)
        }
    }

    @Test func threeTriesAtMost() async throws {
        let failing = Array(repeating: FakeAnswer.reject(status: 503, reason: "unavailable"), count: 4)
        try await Self.withFake(failing) { fake, client in
            await #expect(throws: CLIError.self) { try await Self.post(client) }
            #expect(fake.bodies.count == 3)
        }
    }

    @Test func aRefusalOrAnExpiredOperationIsNotRetried() async throws {
        try await Self.withFake([.reject(status: 409, reason: "replayed")]) { fake, client in
            do {
                _ = try await Self.post(client)
                Issue.record("a 409 was answered as a success")
            } catch let error as CLIError {
                #expect(error.code == .refused && error.message.hasPrefix("replayed"))
            }
            #expect(fake.bodies.count == 1)
        }
        try await Self.withFake([.reject(status: 503, reason: "unavailable")]) { fake, client in
            await #expect(throws: CLIError.self) { try await Self.post(client, expiresAt: 0) }
            #expect(fake.bodies.count == 1, "past its expiresAt, a copy would only be refused")
        }
    }
}
