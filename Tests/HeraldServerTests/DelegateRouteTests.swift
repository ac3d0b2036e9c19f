import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HummingbirdTesting
import Testing

/// docs/protocol.md §11.1 through the router: `POST /v1/delegates`, the channel's list, a delegate's
/// send and its status, and what a delegate may not do.
@Suite struct DelegateRouteTests {
    typealias F = ServerFixture
    typealias Control = SubscriberControlRouteTests
    static let channel = F.other
    static let bot = try! PrivateKey(hex: "0x" + String(repeating: "42", count: 32))

    static func delegate(
        _ action: DelegateUpdate.Action, _ delegate: EthereumAddress, nonce: UInt64, by key: PrivateKey = channel
    ) throws -> String {
        try Control.body(
            try DelegateUpdate(
                action: action, channel: key.address, delegate: delegate, audience: F.audience, nonce: UInt256(nonce),
                issuedAt: Control.issued, expiresAt: Control.expires), by: key)
    }

    /// A Notification of the channel signed by `key`.
    static func send(_ payload: String, nonce: UInt64, by key: PrivateKey) throws -> String {
        try Control.body(
            NotificationOperation(
                channel: channel.address, payload: payload, audience: F.audience, nonce: UInt256(nonce),
                issuedAt: Control.issued, expiresAt: Control.expires), by: key)
    }

    static func feedAccess(_ key: PrivateKey) throws -> HTTPFields {
        let access = FeedAccess(
            wallet: key.address, audience: F.audience, issuedAt: Control.issued, expiresAt: Control.expires)
        return [
            .authorization: try access.signed(with: key, scheme: .eip712, domain: Control.domain).authorizationHeader
        ]
    }

    @Test func aDelegateSendsAsTheChannelUntilRemoved() async throws {
        try await Control().withChannel { client in
            #expect(try await client.post(try Control.subscribe(nonce: 1), uri: "/v1/subscriptions").status == .ok)
            let payload = NotificationDraft(title: "t", body: "b").broadcastPayload()
            let early = try await client.post(try Self.send(payload, nonce: 1, by: Self.bot), uri: "/v1/notifications")
            #expect(early.status == .unauthorized && early.errorCode == "signature_mismatch", "\(early.text)")

            let added = try await client.post(try Self.delegate(.add, Self.bot.address, nonce: 1), uri: "/v1/delegates")
            #expect(added.status == .ok, "\(added.text)")
            #expect(added.json?["status"] == .string("added"))
            #expect(added.json?["delegate"] == .string(Self.bot.address.checksummed))
            let shown = try await client.get("/v1/channels/\(Self.channel.address.checksummed)")
            #expect(shown.json?["delegates"] == .array([.string(Self.bot.address.checksummed)]))

            let sent = try await client.post(try Self.send(payload, nonce: 1, by: Self.bot), uri: "/v1/notifications")
            #expect(sent.status == .accepted, "\(sent.text)")
            guard case .array(let sids)? = sent.json?["sid"], case .string(let sid)? = sids.first else {
                Issue.record("no sid in \(sent.text)")
                return
            }
            // The item is the channel's; the status names the delegate and answers it and the channel.
            for reader in [Self.bot, Self.channel] {
                let status = try await client.execute(
                    uri: "/v1/notifications/\(sid)", method: .get, headers: try Self.feedAccess(reader))
                #expect(status.status == .ok, "\(status.text)")
                #expect(status.json?["signer"] == .string(Self.bot.address.checksummed))
            }
            let feed = try await client.execute(
                uri: "/v1/users/\(Control.subscriber.address.checksummed)/feeds", method: .get,
                headers: try Control.feedAccess())
            let sender = feed.json?["feeds"].flatMap { value -> JSONValue? in
                if case .array(let items) = value { return items.first?["sender"] }
                return nil
            }
            #expect(sender == .string(Self.channel.address.checksummed))

            // A delegate can do nothing else.
            let list = try ChannelSettingsUpdate(
                channel: Self.channel.address, settings: "[]", audience: F.audience, nonce: UInt256(9),
                issuedAt: Control.issued, expiresAt: Control.expires)
            let settings = try await client.post(try Control.body(list, by: Self.bot), uri: "/v1/channel-settings")
            #expect(settings.status == .unauthorized && settings.errorCode == "signature_mismatch")
            let forged = try DelegateUpdate(
                action: .add, channel: Self.channel.address, delegate: F.key.address, audience: F.audience,
                nonce: UInt256(9), issuedAt: Control.issued, expiresAt: Control.expires)
            let byDelegate = try await client.post(try Control.body(forged, by: Self.bot), uri: "/v1/delegates")
            #expect(byDelegate.status == .unauthorized && byDelegate.errorCode == "signature_mismatch")

            let removed = try await client.post(
                try Self.delegate(.remove, Self.bot.address, nonce: 2), uri: "/v1/delegates")
            #expect(removed.json?["status"] == .string("removed"))
            let late = try await client.post(try Self.send(payload, nonce: 2, by: Self.bot), uri: "/v1/notifications")
            #expect(late.status == .unauthorized && late.errorCode == "signature_mismatch")
            let absent = try await client.post(
                try Self.delegate(.remove, Self.bot.address, nonce: 3), uri: "/v1/delegates")
            #expect(absent.json?["status"] == .string("absent"))
        }
    }

    @Test func aChannelCannotBeItsOwnDelegateAndAStrangerIsNoChannel() async throws {
        try await Control().withChannel { client in
            let own = try await client.post(
                try Control.body(
                    SelfDelegate(channel: Self.channel.address, audience: F.audience), by: Self.channel),
                uri: "/v1/delegates")
            #expect(own.status == .badRequest && own.errorCode == "bad_request", "\(own.text)")
            let stranger = try await client.post(
                try Self.delegate(.add, Self.bot.address, nonce: 1, by: F.key), uri: "/v1/delegates")
            #expect(stranger.status == .forbidden && stranger.errorCode == "forbidden")
        }
    }
}

/// A Delegate message naming the channel as its own delegate, which `DelegateUpdate` refuses to build:
/// the same schema and fields, so that the server's own check is what it meets.
private struct SelfDelegate: SignedOperation {
    static let schema = DelegateUpdate.schema
    let channel: EthereumAddress
    let audience: String
    var fieldValues: [OperationField] {
        [
            .string("add"), .address(channel), .address(channel), .string(audience), .uint256(UInt256(1)),
            .uint256(SubscriberControlRouteTests.issued), .uint256(SubscriberControlRouteTests.expires),
        ]
    }
    var claimedSigner: EthereumAddress { channel }
    var nonce: UInt256? { UInt256(1) }
    var issuedAt: UInt256 { SubscriberControlRouteTests.issued }
    var expiresAt: UInt256 { SubscriberControlRouteTests.expires }
    init(channel: EthereumAddress, audience: String) {
        self.channel = channel
        self.audience = audience
    }
    init(decoded: DecodedFields) throws(OperationRejection) {
        throw OperationRejection(.badRequest, "test type")
    }
}
