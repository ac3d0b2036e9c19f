import Foundation
import HeraldCore
import Synchronization
import Testing

@testable import HeraldRelay

/// A token endpoint that counts requests and takes a while to answer, so that callers pile up.
final class SlowTokenEndpoint: PushHTTPTransport {
    private let requests = Mutex(0)
    let answer: String

    init(answer: String) { self.answer = answer }

    func send(_ request: PushHTTPRequest) async throws -> PushHTTPResponse {
        requests.withLock { $0 += 1 }
        try await Task.sleep(for: .milliseconds(100))
        return PushHTTPResponse(status: 200, headers: [], body: Array(answer.utf8))
    }

    var count: Int { requests.withLock { $0 } }
}

/// Callers arriving while a token is being fetched share that one fetch (FCM's OAuth token, the
/// upstream relay's token): a cold start under load makes one request, not one per push.
@Suite struct SingleFlightTokenTests {
    static let callers = 50

    @Test func fiftyConcurrentFCMCallersMakeOneTokenRequest() async throws {
        let endpoint = SlowTokenEndpoint(answer: #"{"access_token":"ya29.shared","expires_in":3600}"#)
        let tokens = FCMAccessTokens(account: try FCMTests.account(), transport: endpoint)
        let received = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<Self.callers { group.addTask { try await tokens.token() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(endpoint.count == 1)
        #expect(received.count == Self.callers && Set(received) == ["ya29.shared"])
        #expect(await tokens.fetched == 1)
        // Invalidated, the next caller fetches again (the shared fetch is not kept past its end).
        await tokens.invalidate("ya29.shared")
        _ = try await tokens.token()
        #expect(endpoint.count == 2)
    }

    @Test func fiftyConcurrentUpstreamCallersMakeOneTokenRequest() async throws {
        let endpoint = SlowTokenEndpoint(answer: #"{"access_token":"up.shared","expires_in":3600}"#)
        let tokens = UpstreamTokens(
            transport: endpoint, upstream: "https://up.example", installationID: UpstreamProviderTests.installation,
            key: "k")
        let received = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<Self.callers { group.addTask { try await tokens.token() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(endpoint.count == 1)
        #expect(received.count == Self.callers && Set(received) == ["up.shared"])
        tokens.invalidate("up.shared")
        _ = try await tokens.token()
        #expect(endpoint.count == 2)
    }
}
