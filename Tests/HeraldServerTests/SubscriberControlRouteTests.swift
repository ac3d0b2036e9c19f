import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HummingbirdTesting
import Testing

/// docs/protocol.md §10 through the router: the four routes, the answers they change, and their errors.
@Suite struct SubscriberControlRouteTests {
    typealias F = ServerFixture
    static let channel = F.other
    static let subscriber = F.key
    static let list = #"[{"id":"trades","kind":"toggle","default":true,"description":"Trades"}]"#
    static let domain = HeraldDomain(chainId: 1)
    static let issued = UInt256(UInt64(F.now - 10))
    static let expires = UInt256(UInt64(F.now + 200))

    static func body<Operation: SignedOperation>(_ operation: Operation, by key: PrivateKey) throws -> String {
        try operation.signed(with: key, scheme: .eip712, domain: domain).jsonText
    }

    /// The text is set after construction (whose own check would refuse a bad one), so that the server's
    /// check is what a bad text meets.
    static func channelSettings(_ settings: String, nonce: UInt64, by key: PrivateKey = channel) throws -> String {
        var operation = try ChannelSettingsUpdate(
            channel: key.address, settings: "[]", audience: F.audience, nonce: UInt256(nonce), issuedAt: issued,
            expiresAt: expires)
        operation.settings = settings
        return try body(operation, by: key)
    }

    static func choices(_ settings: String, nonce: UInt64) throws -> String {
        var operation = try SubscriberSettingsUpdate(
            channel: channel.address, subscriber: subscriber.address, settings: "{}", audience: F.audience,
            nonce: UInt256(nonce), issuedAt: issued, expiresAt: expires)
        operation.settings = settings
        return try body(operation, by: subscriber)
    }

    static func mute(until: UInt64, nonce: UInt64) throws -> String {
        try body(
            Mute(
                channel: channel.address, subscriber: subscriber.address, until: UInt256(until), audience: F.audience,
                nonce: UInt256(nonce), issuedAt: issued, expiresAt: expires), by: subscriber)
    }

    static func read(sids: String, upTo: UInt64 = 0, nonce: UInt64) throws -> String {
        var operation = try ReadMark(
            wallet: subscriber.address, sids: "1", upTo: UInt256(upTo), audience: F.audience, nonce: UInt256(nonce),
            issuedAt: issued, expiresAt: expires)
        operation.sids = sids
        return try body(operation, by: subscriber)
    }

    static func send(_ payload: String, nonce: UInt64) throws -> String {
        try body(
            NotificationOperation(
                channel: channel.address, payload: payload, audience: F.audience, nonce: UInt256(nonce),
                issuedAt: issued, expiresAt: expires), by: channel)
    }

    static func subscribe(nonce: UInt64) throws -> String {
        try body(
            Subscription(
                action: .subscribe, channel: channel.address, subscriber: subscriber.address, audience: F.audience,
                nonce: UInt256(nonce), issuedAt: issued, expiresAt: expires), by: subscriber)
    }

    static func feedAccess() throws -> HTTPFields {
        let access = FeedAccess(wallet: subscriber.address, audience: F.audience, issuedAt: issued, expiresAt: expires)
        return [
            .authorization: try access.signed(with: subscriber, scheme: .eip191, domain: domain).authorizationHeader
        ]
    }

    func withChannel(
        configure: @escaping (inout HeraldSettings) -> Void = { _ in },
        _ body: @Sendable @escaping (any TestClientProtocol) async throws -> Void
    ) async throws {
        let fixture = try F(configure: configure)
        try await fixture.state.store.saveChannel(
            ChannelRecord(address: Self.channel.address, name: "Trades", icon: "", url: "", createdAt: 1))
        try await fixture.test(body)
    }

    @Test func aChannelPublishesSettingsAndASubscriberChoosesAmongThem() async throws {
        try await withChannel { client in
            let published = try await client.post(
                try Self.channelSettings(Self.list, nonce: 1), uri: "/v1/channel-settings")
            #expect(published.status == .ok, "\(published.text)")
            #expect(published.json?["settings"]?.jsonText == Self.list)
            let shown = try await client.get("/v1/channels/\(Self.channel.address.checksummed)")
            #expect(shown.json?["settings"]?.jsonText == Self.list)
            let bad = try await client.post(
                try Self.channelSettings(#"[{"id":"X","kind":"toggle","default":true}]"#, nonce: 2),
                uri: "/v1/channel-settings")
            #expect(bad.status == .badRequest && bad.errorCode == "invalid_settings")
            let stranger = try await client.post(
                try Self.channelSettings("[]", nonce: 3, by: Self.subscriber), uri: "/v1/channel-settings")
            #expect(stranger.status == .forbidden && stranger.errorCode == "forbidden")

            let unsubscribed = try await client.post(
                try Self.choices(#"{"trades":false}"#, nonce: 4), uri: "/v1/subscriber-settings")
            #expect(unsubscribed.status == .notFound && unsubscribed.errorCode == "not_found")
            #expect(try await client.post(try Self.subscribe(nonce: 5), uri: "/v1/subscriptions").status == .ok)
            let invalid = try await client.post(
                try Self.choices(#"{"trades":1}"#, nonce: 4), uri: "/v1/subscriber-settings")
            #expect(invalid.status == .badRequest && invalid.errorCode == "invalid_settings")
            let chosen = try await client.post(
                try Self.choices(#"{"trades":false}"#, nonce: 4), uri: "/v1/subscriber-settings")
            #expect(chosen.status == .ok, "\(chosen.text)")
            #expect(chosen.json?["settings"]?.jsonText == #"{"trades":false}"#)
            let again = try await client.post(
                try Self.choices(#"{"trades":false}"#, nonce: 4), uri: "/v1/subscriber-settings")
            #expect(again.status == .ok && again.headers[.idempotentReplay] == "true")
            #expect(again.json == chosen.json)
            let otherChoice = try await client.post(
                try Self.choices(#"{"trades":true}"#, nonce: 4), uri: "/v1/subscriber-settings")
            #expect(otherChoice.status == .conflict && otherChoice.errorCode == "replayed")

            // A send naming the toggle leaves this subscriber out: filtered, no sid.
            let payload =
                String(NotificationDraft(title: "t", body: "b").broadcastPayload().dropLast())
                + #","setting":{"id":"trades"}}"#
            let sent = try await client.post(try Self.send(payload, nonce: 6), uri: "/v1/notifications")
            #expect(sent.status == .accepted, "\(sent.text)")
            #expect(sent.json?["filtered"] == .number("1") && sent.json?["recipients"] == .number("0"))
            #expect(sent.json?["throttled"] == .array([]))
            let wrong =
                String(NotificationDraft(title: "t", body: "b").broadcastPayload().dropLast())
                + #","setting":{"id":"trades","value":3}}"#
            let refused = try await client.post(try Self.send(wrong, nonce: 7), uri: "/v1/notifications")
            #expect(refused.status == .badRequest && refused.errorCode == "invalid_payload")
        }
    }

    @Test func aMuteReadsBackAndItsRangeIsChecked() async throws {
        try await withChannel { client in
            let notYet = try await client.post(try Self.mute(until: UInt64(F.now + 3600), nonce: 1), uri: "/v1/mutes")
            #expect(notYet.status == .notFound)
            _ = try await client.post(try Self.subscribe(nonce: 2), uri: "/v1/subscriptions")
            let past = try await client.post(try Self.mute(until: UInt64(F.now), nonce: 1), uri: "/v1/mutes")
            #expect(past.status == .badRequest && past.errorCode == "bad_request")
            let muted = try await client.post(try Self.mute(until: UInt64(F.now + 3600), nonce: 1), uri: "/v1/mutes")
            #expect(muted.status == .ok && muted.json?["mutedUntil"] == .number(String(F.now + 3600)))
            let listed = try await client.execute(
                uri: "/v1/users/\(Self.subscriber.address.checksummed)/subscriptions", method: .get,
                headers: try Self.feedAccess())
            let entry = listed.json?["subscriptions"].flatMap { value -> JSONValue? in
                if case .array(let items) = value { return items.first }
                return nil
            }
            #expect(entry?["mutedUntil"] == .number(String(F.now + 3600)))
            #expect(entry?["unread"] == .number("0") && entry?["settings"] == .object([]))
        }
    }

    @Test func readMarksShowInFeedsAndUnreadCounts() async throws {
        try await withChannel { client in
            _ = try await client.post(try Self.subscribe(nonce: 1), uri: "/v1/subscriptions")
            var sids: [String] = []
            for nonce in 2...4 {
                let sent = try await client.post(
                    try Self.send(
                        NotificationDraft(title: "t\(nonce)", body: "b").broadcastPayload(), nonce: UInt64(nonce)),
                    uri: "/v1/notifications")
                if case .array(let list)? = sent.json?["sid"], let sid = list.first?.stringValue { sids.append(sid) }
            }
            #expect(sids.count == 3)
            let marked = try await client.post(try Self.read(sids: sids[0], nonce: 5), uri: "/v1/read")
            #expect(marked.status == .ok && marked.json?["unread"] == .number("2"), "\(marked.text)")
            let feed = try await client.execute(
                uri: "/v1/users/\(Self.subscriber.address.checksummed)/feeds?limit=1", method: .get,
                headers: try Self.feedAccess())
            #expect(feed.json?["unread"] == .number("2") && feed.json?["itemcount"] == .number("3"))
            if case .array(let items)? = feed.json?["feeds"] { #expect(items.first?["read"] == .bool(false)) }
            let malformed = try await client.post(try Self.read(sids: "01", nonce: 6), uri: "/v1/read")
            #expect(malformed.status == .badRequest && malformed.errorCode == "bad_request")
            let nothing = try await client.post(try Self.read(sids: "", nonce: 6), uri: "/v1/read")
            #expect(nothing.status == .badRequest)
            let all = try await client.post(
                try Self.read(sids: "", upTo: UInt64(sids[2]) ?? 0, nonce: 6), uri: "/v1/read")
            #expect(all.json?["unread"] == .number("0"))
        }
    }

    /// A broadcast past its channel's bucket is refused whole with a whole-second Retry-After, and its
    /// nonce stays unspent.
    @Test func aBroadcastOverItsBucketIs429WithRetryAfter() async throws {
        try await withChannel(configure: { $0.limits.channelBroadcastsPerHour = 1 }) { client in
            let payload = NotificationDraft(title: "t", body: "b").broadcastPayload()
            #expect(
                try await client.post(try Self.send(payload, nonce: 1), uri: "/v1/notifications").status == .accepted)
            let refused = try await client.post(try Self.send(payload, nonce: 2), uri: "/v1/notifications")
            #expect(refused.status == .tooManyRequests && refused.errorCode == "rate_limited")
            #expect(refused.headers[.retryAfter] == "3600")
        }
    }
}
