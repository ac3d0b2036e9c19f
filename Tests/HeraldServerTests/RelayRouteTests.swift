import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldStoreSQLite
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

@testable import HeraldServer

/// The upstream relay's token and usage routes (docs/protocol.md §7), at the router.
@Suite struct RelayRouteTests {
    typealias F = ServerFixture
    static let form = "application/x-www-form-urlencoded"

    /// Adds an installation to the fixture's store; returns its id and key.
    static func install(_ fixture: F, name: String = "Home") async throws -> (id: String, key: String) {
        let (id, key) = RelayCredentials.generate()
        try await fixture.state.store.addInstallation(
            RelayInstallation(id: id, name: name, keyHash: RelayCredentials.hash(key: key), rate: 100, createdAt: 1))
        return (id, key)
    }

    /// A token endpoint's answer: its status and its error, if any.
    struct Answer: Equatable {
        let status: HTTPResponse.Status
        let error: String?
        init(_ status: HTTPResponse.Status, _ error: String?) {
            self.status = status
            self.error = error
        }
    }

    static func tokenRequest(id: String, key: String, extra: String = "") -> String {
        "grant_type=client_credentials&client_id=installation.\(id)&client_secret=\(key)\(extra)"
    }

    @Test func anInstallationGetsATokenAndReadsItsUsage() async throws {
        let fixture = try F()
        let (id, key) = try await Self.install(fixture)
        try await fixture.test { client in
            let response = try await client.post(
                Self.tokenRequest(id: id, key: key, extra: "&scope=api.push"), uri: "/v1/relay/token",
                contentType: Self.form)
            #expect(response.status == .ok)
            #expect(response.headers[.cacheControl] == "no-store")
            let json = try #require(response.json)
            #expect(json["token_type"] == .string("Bearer"))
            #expect(json["expires_in"] == .number("3600"))
            #expect(json["scope"] == .string("api.push"))
            let token = try #require(json["access_token"]?.stringValue)
            #expect(token.split(separator: ".").count == 3)

            let usage = try await client.execute(
                uri: "/v1/relay/usage", method: .get, headers: [.authorization: "Bearer \(token)"])
            #expect(usage.status == .ok)
            #expect(
                usage.json
                    == .object([
                        ("installation", .string(id)), ("name", .string("Home")), ("sent", .number("0")),
                        ("dead", .number("0")), ("retry", .number("0")), ("failed", .number("0")),
                    ]))
        }
    }

    @Test func tokenRequestsAreCheckedInRFC6749Order() async throws {
        let fixture = try F()
        let (id, key) = try await Self.install(fixture)
        let other = RelayCredentials.generate()
        try await fixture.test { client in
            func post(_ body: String, contentType: String? = Self.form) async throws -> Answer {
                let response = try await client.post(body, uri: "/v1/relay/token", contentType: contentType)
                return Answer(response.status, response.json?["error"]?.stringValue ?? response.errorCode)
            }
            func check(
                _ body: String, contentType: String? = Self.form, _ expected: Answer,
                sourceLocation: SourceLocation = #_sourceLocation
            ) async throws {
                let answer = try await post(body, contentType: contentType)
                #expect(answer == expected, sourceLocation: sourceLocation)
            }
            let good = Self.tokenRequest(id: id, key: key)
            try await check(
                good, contentType: "application/json", Answer(.unsupportedMediaType, "unsupported_media_type"))
            try await check(good, contentType: nil, Answer(.unsupportedMediaType, "unsupported_media_type"))
            try await check("client_id=installation.\(id)&client_secret=\(key)", Answer(.badRequest, "invalid_request"))
            try await check(
                "grant_type=password&client_id=installation.\(id)&client_secret=\(key)",
                Answer(.badRequest, "unsupported_grant_type"))
            try await check("grant_type=client_credentials", Answer(.badRequest, "invalid_request"))
            try await check(good + "&grant_type=client_credentials", Answer(.badRequest, "invalid_request"))
            try await check("grant_type=client_credentials&client_id=%zz", Answer(.badRequest, "invalid_request"))
            // Unknown id, wrong key, a malformed id: the same answer, that says nothing of which.
            try await check(Self.tokenRequest(id: other.id, key: key), Answer(.unauthorized, "invalid_client"))
            try await check(Self.tokenRequest(id: id, key: other.key), Answer(.unauthorized, "invalid_client"))
            try await check(
                "grant_type=client_credentials&client_id=\(id)&client_secret=\(key)",
                Answer(.unauthorized, "invalid_client"))
            try await check(good + "&scope=api.admin", Answer(.badRequest, "invalid_scope"))
            // Form encoding: `+` and `%2E` decode before the comparison.
            let encoded =
                "grant_type=client%5Fcredentials&client_id=installation%2E\(id)&client_secret=\(key)&scope=api.push"
            try await check(encoded, Answer(.ok, nil))
        }
    }

    @Test func usageRefusesAnythingButAValidBearerToken() async throws {
        let fixture = try F()
        let (id, _) = try await Self.install(fixture)
        // A token signed with another secret than this upstream's.
        let foreign = RelayAccessToken(secret: [UInt8](repeating: 7, count: 32)).issue(installation: id, now: F.now)
        try await fixture.test { client in
            for authorization in [nil, "Bearer", "Bearer x.y.z", "Basic abc", "Bearer \(foreign)"] {
                var headers: HTTPFields = [:]
                if let authorization { headers[.authorization] = authorization }
                let response = try await client.execute(uri: "/v1/relay/usage", method: .get, headers: headers)
                #expect(response.status == .unauthorized, "\(authorization ?? "none")")
                #expect(response.errorCode == "unauthorized")
            }
        }
    }
}

/// Access tokens and the authority that checks them, with a clock the test moves.
@Suite struct RelayAuthorityTests {
    final class Clock: Sendable {
        let now = Mutex<Int64>(1_000)
        func read() -> Int64 { now.withLock { $0 } }
        func advance(_ seconds: Int64) { now.withLock { $0 += seconds } }
    }

    @Test func tokensExpireAndAreBoundToTheirSecretAndScope() {
        let tokens = RelayAccessToken(secret: [UInt8](repeating: 1, count: 32))
        let id = RelayCredentials.generate().id
        let token = tokens.issue(installation: id, now: 1_000)
        #expect(tokens.verify(token, now: 1_000) == id)
        #expect(tokens.verify(token, now: 1_000 + 3_599) == id)
        #expect(tokens.verify(token, now: 1_000 + 3_600) == nil, "expired")
        #expect(RelayAccessToken(secret: [UInt8](repeating: 2, count: 32)).verify(token, now: 1_000) == nil)
        // A changed claim breaks the MAC.
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Array(#"{"sub":"\#(id)","scope":"api.push","exp":99999999999}"#.utf8))
        #expect(tokens.verify(parts.joined(separator: "."), now: 1_000) == nil)
        #expect(tokens.verify("", now: 1_000) == nil)
        #expect(tokens.verify("a.b", now: 1_000) == nil)
    }

    @Test func aRemovedInstallationsTokensStopWorkingWithinAMinute() async throws {
        let folder = NSTemporaryDirectory() + "herald-relay-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try SQLiteHeraldStore(path: folder + "/h.sqlite")
        let clock = Clock()
        let authority = RelayAuthority(store: store, clock: { clock.read() })
        let (id, key) = RelayCredentials.generate()
        try await store.addInstallation(
            RelayInstallation(id: id, name: "n", keyHash: RelayCredentials.hash(key: key), rate: 1, createdAt: 1))
        let token = try await authority.tokens().issue(installation: id, now: clock.read())
        #expect(try await authority.authorize("Bearer \(token)")?.id == id)
        #expect(try await authority.authorize("bearer  \(token)")?.id == id, "the scheme is case-insensitive")
        #expect(try await store.removeInstallation(id: id))
        clock.advance(60)
        #expect(try await authority.authorize("Bearer \(token)") == nil)
        // A second authority (another node) signs and checks with the same stored secret.
        let node = RelayAuthority(store: store, clock: { clock.read() })
        #expect(try await node.tokens().verify(token, now: clock.read()) == id)
        try await store.close()
    }
}
