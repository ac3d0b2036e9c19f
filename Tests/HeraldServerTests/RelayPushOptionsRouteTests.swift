import HTTPTypes
import HeraldCore
import HeraldRelay
import HeraldServer
import Testing

/// docs/protocol.md §7's optional fields of a forwarded push, at the upstream's router: applied as its own
/// pushes' options would be (§11.4), refused when of the wrong type or range.
@Suite struct RelayPushOptionsRouteTests {
    typealias R = RelayPushRouteTests
    typealias F = ServerFixture

    /// A push of the request with `fields` (`"name":value` pairs, comma-separated) added to it.
    static func push(_ id: String, expiresAt: Int64 = F.now + 600, _ fields: String) -> String {
        String(R.push(id, token: R.ios, expiresAt: expiresAt).dropLast()) + "," + fields + "}"
    }

    @Test func theOptionsReachTheProvider() async throws {
        try await R.withRelay { client, token, provider, _ in
            let fields = #""priority":"normal","collapseId":"trade-17","threadId":"0xChannel","ttl":600,"badge":3"#
            let response = try await R.send(
                client, token, R.body([Self.push(R.ids[0], fields), R.push(R.ids[1], token: R.ios)]))
            #expect(response.status == .ok)
            let received = provider.received.withLock { $0 }
            let options = try #require(received.first { $0.id == R.uuidBytes(R.ids[0]) })
            #expect(options.priority == .normal && options.collapseID == "trade-17" && options.threadID == "0xChannel")
            #expect(options.timeToLive == 600 && options.badge == 3 && options.pushType == .alert)
            let plain = try #require(received.first { $0.id == R.uuidBytes(R.ids[1]) })
            #expect(plain.priority == nil && plain.collapseID == nil && plain.threadID == nil)
            #expect(plain.timeToLive == nil && plain.badge == nil)
        }
    }

    /// §11.4: with `ttl` 0 a push is attempted once however late; without, a passed `expiresAt` fails it.
    @Test func aTTLOfZeroIsSentOnceEvenPastItsExpiry() async throws {
        try await R.withRelay { client, token, provider, _ in
            let response = try await R.send(
                client, token,
                R.body([
                    Self.push(R.ids[0], expiresAt: F.now - 30, #""ttl":0"#),
                    Self.push(R.ids[1], expiresAt: F.now - 30, #""ttl":60"#),
                ]))
            guard case .array(let items)? = response.json?["results"] else { throw CancellationError() }
            #expect(items.map { $0["status"]?.stringValue } == ["sent", "failed"])
            #expect(provider.received.withLock { $0.map(\.timeToLive) } == [0])
        }
    }

    /// The upstream's own `push.content = none`: nothing it groups or collapses by goes on.
    @Test func underContentNoneTheThreadAndCollapseIDsStayBehind() async throws {
        try await R.withRelay(configure: { $0.push.content = .none }) { client, token, provider, _ in
            let fields = #""priority":"normal","collapseId":"trade-17","threadId":"0xChannel","badge":1"#
            #expect(try await R.send(client, token, R.body([Self.push(R.ids[0], fields)])).status == .ok)
            let message = try #require(provider.received.withLock { $0.first })
            #expect(message.collapseID == nil && message.threadID == nil)
            #expect(message.priority == .normal && message.badge == 1)
        }
    }

    /// docs/protocol.md §7 and §10: a downstream's read-sync push reaches the provider as one, badge count and
    /// collapse id intact, whatever this server's `push.content` (a badge-only body shows nothing).
    @Test func aKindReadPushReachesTheProviderAsAReadSync() async throws {
        try await R.withRelay(configure: { $0.push.content = .none }) { client, token, provider, _ in
            let read =
                String(R.push(R.ids[0], token: R.ios).dropLast())
                .replacingOccurrences(of: #""payload":"#, with: #""kind":"read","ignored":"#)
                + #","payload":{"unread":"4","epoch":"1763769600123"}}"#
            #expect(try await R.send(client, token, R.body([read])).status == .ok)
            let message = try #require(provider.received.withLock { $0.first })
            #expect(message.content == .readSync(ReadSyncContent(unread: 4, epoch: 1_763_769_600_123)))
            #expect(message.collapseID == ReadSyncContent.apnsCollapseID && message.priority == .normal)
        }
    }

    @Test func aReadPushOfAnotherKindOrPayloadIsInvalidPayload() async throws {
        try await R.withRelay { client, token, provider, _ in
            let base = String(R.push(R.ids[0], token: R.ios).dropLast())
                .replacingOccurrences(of: #""payload":"#, with: #""ignored":"#)
            for fields in [
                #""kind":"badge","payload":{"unread":"4","epoch":"1"}"#,
                #""kind":"read","payload":{"unread":4,"epoch":"1"}"#,
                #""kind":"read","payload":{"unread":"-1","epoch":"1"}"#, #""kind":"read","payload":{"epoch":"1"}"#,
            ] {
                let response = try await R.send(client, token, R.body([base + "," + fields + "}"]))
                #expect(response.status == .badRequest && response.errorCode == "invalid_payload", "\(fields)")
            }
            #expect(provider.received.withLock { $0.isEmpty })
        }
    }

    @Test func anOptionOfTheWrongTypeOrRangeIsInvalidPayloadAndAnUnknownOneIsIgnored() async throws {
        try await R.withRelay { client, token, provider, _ in
            let refused = [
                #""priority":"urgent""#, #""priority":10"#, #""collapseId":"""#, #""collapseId":"has space""#,
                #""collapseId":"\#(String(repeating: "x", count: 33))""#, #""threadId":7"#, #""ttl":-1"#,
                #""ttl":2419201"#, #""ttl":1.5"#, #""ttl":"60""#, #""badge":-1"#, #""badge":"3""#,
            ]
            for fields in refused {
                let response = try await R.send(client, token, R.body([Self.push(R.ids[0], fields)]))
                #expect(response.status == .badRequest && response.errorCode == "invalid_payload", "\(fields)")
            }
            #expect(provider.received.withLock { $0.isEmpty })
            let unknown = try await R.send(client, token, R.body([Self.push(R.ids[0], #""sound":"chime""#)]))
            #expect(unknown.status == .ok)
            let accepted = try await R.send(
                client, token,
                R.body([Self.push(R.ids[1], #""collapseId":"\#(String(repeating: "x", count: 32))","ttl":2419200"#)]))
            #expect(accepted.status == .ok)
        }
    }
}
