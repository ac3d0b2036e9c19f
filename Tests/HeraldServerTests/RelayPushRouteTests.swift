import Foundation
import HTTPTypes
import HeraldCore
import HeraldRelay
import HeraldServer
import HeraldStore
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

/// `POST /v1/relay/pushes` at the router (docs/protocol.md §7), with a provider that records what it is given.
@Suite struct RelayPushRouteTests {
    typealias F = ServerFixture

    /// Answers forwarded pushes by device token prefix, and records them.
    final class RecordingProvider: PushProvider {
        let name = "recording"
        let received = Mutex<[PushMessage]>([])
        func deliver(_ message: PushMessage) async -> PushDelivery {
            received.withLock { $0.append(message) }
            switch message.deviceToken.prefix(4) {
            case "dead": return .deadToken(reason: "APNs 410 Unregistered")
            case "aaaa": return .retryable(reason: "APNs 429", retryAfter: 7)
            case "ffff": return .failed(reason: "APNs 400 BadTopic")
            default: return .sent
            }
        }
    }

    static let payload = """
        {"notification":{"title":"Trade","body":"Accepted"},"data":{"type":"3","sid":"12","epoch":"1763769600123",\
        "app":"Desk","icon":"","url":"","secret":"","asub":"Trade","amsg":"Accepted","acta":"","aimg":""}}
        """

    static func push(_ id: String, platform: String = "ios", token: String, expiresAt: Int64 = F.now + 600) -> String {
        #"{"id":"\#(id)","platform":"\#(platform)","deviceToken":"\#(token)","payload":\#(payload),"expiresAt":\#(expiresAt)}"#
    }

    static func body(_ pushes: [String]) -> String { #"{"pushes":[\#(pushes.joined(separator: ","))]}"# }

    static let ios = String(repeating: "6b1f", count: 16)
    static let android = "fcm-token_" + String(repeating: "x", count: 40)

    /// A router with the recording provider for both services and one installation with its token.
    static func withRelay(
        rate: Int = 100, configure: (inout HeraldSettings) -> Void = { _ in },
        _ body: @Sendable (any TestClientProtocol, String, RecordingProvider, F) async throws -> Void
    ) async throws {
        let fixture = try F(configure: configure)
        let (id, key) = RelayCredentials.generate()
        try await fixture.state.store.addInstallation(
            RelayInstallation(id: id, name: "Home", keyHash: RelayCredentials.hash(key: key), rate: rate, createdAt: 1))
        let provider = RecordingProvider()
        let providers = PushProviders(apns: provider, fcm: provider, logger: fixture.state.logger)
        let app = Application(router: HeraldServerApp.makeRouter(fixture.state, providers: providers))
        defer { try? FileManager.default.removeItem(atPath: fixture.folder) }
        try await app.test(.router) { client in
            let response = try await client.post(
                "grant_type=client_credentials&client_id=installation.\(id)&client_secret=\(key)",
                uri: "/v1/relay/token", contentType: "application/x-www-form-urlencoded")
            let token = try #require(response.json?["access_token"]?.stringValue)
            try await body(client, token, provider, fixture)
        }
        try? await fixture.state.store.close()
    }

    static func send(_ client: any TestClientProtocol, _ token: String, _ body: String) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/relay/pushes", method: .post,
            headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
            body: ByteBuffer(string: body))
    }

    static let ids = (0..<12).map { String(format: "6f9619ff-8b86-4011-b42d-00c04fc964%02x", $0) }

    @Test func eachPushIsSentAtOnceAndAnsweredInOrder() async throws {
        try await Self.withRelay { client, token, provider, _ in
            let response = try await Self.send(
                client, token,
                Self.body([
                    Self.push(Self.ids[0], token: Self.ios),
                    Self.push(Self.ids[1], platform: "android", token: Self.android),
                    Self.push(Self.ids[2], platform: "ios-sandbox", token: "dead" + Self.ios.dropFirst(4)),
                    Self.push(Self.ids[3], token: "aaaa" + Self.ios.dropFirst(4)),
                    Self.push(Self.ids[4], token: "ffff" + Self.ios.dropFirst(4)),
                    Self.push(Self.ids[5], token: Self.ios, expiresAt: F.now - 1),
                ]))
            #expect(response.status == .ok)
            let results = try #require(response.json?["results"])
            guard case .array(let items) = results else { throw CancellationError() }
            #expect(items.map { $0["id"]?.stringValue } == Array(Self.ids[0..<6]))
            #expect(
                items.map { $0["status"]?.stringValue } == ["sent", "sent", "dead", "retry", "failed", "failed"])
            #expect(items[3]["retryAfter"] == .number("7"))
            #expect(items[5]["reason"] == .string("expired"))

            let received = provider.received.withLock { $0 }
            #expect(received.count == 5, "the expired push is not sent")
            let first = try #require(received.first { $0.id == Self.uuidBytes(Self.ids[0]) })
            #expect(first.platform == .ios)
            #expect(first.deviceToken == Self.ios)
            #expect(first.expiration == F.now + 600)
            #expect(first.notification?.title == "Trade")
            #expect(first.data("amsg") == "Accepted")
            #expect(received.contains { $0.platform == .iosSandbox })

            let usage = try await client.execute(
                uri: "/v1/relay/usage", method: .get, headers: [.authorization: "Bearer \(token)"])
            #expect(usage.json?["sent"] == .number("2"))
            #expect(usage.json?["dead"] == .number("1"))
            #expect(usage.json?["retry"] == .number("1"))
            #expect(usage.json?["failed"] == .number("2"))
            let metrics = try await client.get("/metrics").text
            #expect(metrics.contains(#"herald_relay_pushes_total{installation=""#))
            #expect(metrics.contains(#"status="sent"} 2"#))
        }
    }

    static func uuidBytes(_ id: String) -> [UInt8] {
        withUnsafeBytes(of: UUID(uuidString: id)!.uuid) { Array($0) }
    }

    @Test func pushesOverTheInstallationsRateAreToldToRetryThenTheRequestIs429() async throws {
        // Rate 1/s: a burst of 10.
        try await Self.withRelay(rate: 1) { client, token, provider, _ in
            let twelve = Self.body(Self.ids.map { Self.push($0, token: Self.ios) })
            let response = try await Self.send(client, token, twelve)
            #expect(response.status == .ok)
            guard case .array(let items)? = response.json?["results"] else { throw CancellationError() }
            #expect(items.filter { $0["status"] == .string("sent") }.count == 10)
            #expect(items.suffix(2).allSatisfy { $0["status"] == .string("retry") && $0["retryAfter"] == .number("2") })
            #expect(provider.received.withLock { $0.count } == 10)
            // The fixture's clock stands still: nothing refills, so not one push fits.
            let again = try await Self.send(client, token, Self.body([Self.push(Self.ids[0], token: Self.ios)]))
            #expect(again.status == .tooManyRequests)
            #expect(again.errorCode == "rate_limited")
            #expect(again.headers[.retryAfter] == "1")
        }
    }

    @Test func malformedRequestsAreRefusedWholeWithTheirCodes() async throws {
        try await Self.withRelay { client, token, provider, _ in
            let good = Self.push(Self.ids[0], token: Self.ios)
            let cases: [(String, HTTPResponse.Status, String)] = [
                ("not json", .badRequest, "bad_request"),
                (#"{"pushes":[]}"#, .badRequest, "bad_request"),
                (Self.body(Array(repeating: good, count: 101)), .badRequest, "bad_request"),
                (Self.body([good.replacingOccurrences(of: Self.ids[0], with: "nope")]), .badRequest, "bad_request"),
                (
                    Self.body([good.replacingOccurrences(of: #""ios""#, with: #""web""#)]), .badRequest,
                    "invalid_platform"
                ),
                (
                    Self.body([good.replacingOccurrences(of: Self.ios, with: "xyz")]), .badRequest,
                    "invalid_device_token"
                ),
                (Self.body([good.replacingOccurrences(of: #""sid":"12","#, with: "")]), .badRequest, "invalid_payload"),
                (
                    Self.body([good.replacingOccurrences(of: #""sid":"12""#, with: #""sid":12"#)]), .badRequest,
                    "invalid_payload"
                ),
                (
                    Self.body([good, good.replacingOccurrences(of: Self.ios, with: "zz")]), .badRequest,
                    "invalid_device_token"
                ),
            ]
            for (body, status, code) in cases {
                let response = try await Self.send(client, token, body)
                #expect(response.status == status, "\(body.prefix(60))")
                #expect(response.errorCode == code, "\(body.prefix(60))")
            }
            #expect(provider.received.withLock { $0.isEmpty }, "a refused request sends nothing")
            let wrongType = try await client.execute(
                uri: "/v1/relay/pushes", method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "text/plain"],
                body: ByteBuffer(string: Self.body([good])))
            #expect(wrongType.status == .unsupportedMediaType)
            let anonymous = try await client.post(Self.body([good]), uri: "/v1/relay/pushes")
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test func theUpstreamsOwnPushContentNoneSendsOnlyTheWakeUp() async throws {
        try await Self.withRelay(configure: { $0.push.content = .none }) { client, token, provider, _ in
            let response = try await Self.send(client, token, Self.body([Self.push(Self.ids[0], token: Self.ios)]))
            #expect(response.status == .ok)
            let message = try #require(provider.received.withLock { $0.first })
            #expect(message.notification?.title == PushContent.wakeUpTitle)
            #expect(message.notification?.data.map(\.key) == ["type", "sid", "epoch"])
        }
    }
}
