import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HummingbirdTesting
import NIOCore
import Testing

@Suite struct SubscriptionRouteTests {
    typealias F = ServerFixture
    static let channelKey = F.other

    static func subscription(
        _ action: Subscription.Action = .subscribe, channel: EthereumAddress = channelKey.address, nonce: UInt64
    ) -> Subscription {
        Subscription(
            action: action, channel: channel, subscriber: F.key.address, audience: F.audience, nonce: UInt256(nonce),
            issuedAt: UInt256(UInt64(F.now - 10)), expiresAt: UInt256(UInt64(F.now + 200)))
    }

    static func signed(_ operation: Subscription, by key: PrivateKey = F.key) throws -> String {
        try operation.signed(with: key, scheme: .eip712, domain: HeraldDomain(chainId: 1)).jsonText
    }

    static func feedAccess(
        wallet: EthereumAddress = F.key.address, by key: PrivateKey = F.key, audience: String = F.audience
    )
        throws -> String
    {
        let access = FeedAccess(
            wallet: wallet, audience: audience, issuedAt: UInt256(UInt64(F.now - 10)),
            expiresAt: UInt256(UInt64(F.now + 200)))
        return try access.signed(with: key, scheme: .eip191, domain: HeraldDomain(chainId: 1)).authorizationHeader
    }

    func withChannel(_ body: @Sendable @escaping (any TestClientProtocol) async throws -> Void) async throws {
        let fixture = try F()
        try await fixture.state.store.saveChannel(
            ChannelRecord(
                address: Self.channelKey.address, name: "Trades", icon: "https://i.example/t.png",
                url: "https://t.example", createdAt: 1))
        try await fixture.test(body)
    }

    func getSubscriptions(
        _ client: any TestClientProtocol, authorization: String?, wallet: String = F.key.address.checksummed
    )
        async throws -> TestResponse
    {
        var headers: HTTPFields = [:]
        if let authorization { headers[.authorization] = authorization }
        return try await client.execute(uri: "/v1/users/\(wallet)/subscriptions", method: .get, headers: headers)
    }

    @Test func subscribeListUnsubscribe() async throws {
        try await withChannel { client in
            let channel = Self.channelKey.address.checksummed
            let subscribed = try await client.post(
                try Self.signed(Self.subscription(nonce: 1)), uri: "/v1/subscriptions")
            #expect(subscribed.status == .ok, "\(subscribed.text)")
            #expect(subscribed.json?["status"] == .string("subscribed"))
            #expect(subscribed.json?["channel"] == .string(channel))
            #expect(try await client.get("/v1/channels/\(channel)").json?["subscribers"] == .number("1"))
            #expect(try await client.get("/v1/channels/\(channel)").json?["name"] == .string("Trades"))

            let listed = try await getSubscriptions(client, authorization: try Self.feedAccess())
            #expect(listed.status == .ok, "\(listed.text)")
            guard case .array(let items)? = listed.json?["subscriptions"] else {
                Issue.record("no subscriptions array")
                return
            }
            #expect(items.count == 1)
            #expect(items.first?["channel"] == .string(channel))
            #expect(items.first?["name"] == .string("Trades"))

            let unsubscribed = try await client.post(
                try Self.signed(Self.subscription(.unsubscribe, nonce: 2)), uri: "/v1/subscriptions")
            #expect(unsubscribed.json?["status"] == .string("unsubscribed"))
            #expect(try await client.get("/v1/channels/\(channel)").json?["subscribers"] == .number("0"))
        }
    }

    @Test func replayUnknownChannelAndWrongSigner() async throws {
        try await withChannel { client in
            let body = try Self.signed(Self.subscription(nonce: 5))
            let first = try await client.post(body, uri: "/v1/subscriptions")
            #expect(first.status == .ok)
            // Unsubscribed meanwhile, the same subscribe again answers what it answered, and changes nothing.
            let unsubscribe = try Self.signed(Self.subscription(.unsubscribe, nonce: 50))
            #expect(try await client.post(unsubscribe, uri: "/v1/subscriptions").status == .ok)
            let again = try await client.post(body, uri: "/v1/subscriptions")
            #expect(again.status == .ok && again.headers[.idempotentReplay] == "true")
            #expect(again.json == first.json && again.json?["status"] == .string("subscribed"))
            #expect(
                try await client.get("/v1/channels/\(Self.channelKey.address.checksummed)").json?["subscribers"]
                    == .number("0"))
            let otherWithSameNonce = try Self.signed(Self.subscription(.unsubscribe, nonce: 5))
            #expect(try await client.post(otherWithSameNonce, uri: "/v1/subscriptions").errorCode == "replayed")
            let unknown = try await client.post(
                try Self.signed(Self.subscription(channel: F.key.address, nonce: 6)), uri: "/v1/subscriptions")
            #expect(unknown.errorCode == "not_found")
            // The refused subscribe spent nothing: the same nonce works once the channel is known.
            let bySomeoneElse = try await client.post(
                try Self.signed(Self.subscription(nonce: 7), by: Self.channelKey), uri: "/v1/subscriptions")
            #expect(bySomeoneElse.errorCode == "signature_mismatch")
            #expect(try await client.get("/v1/channels/\(F.key.address.checksummed)").errorCode == "not_found")
            #expect(try await client.get("/v1/channels/nope").errorCode == "invalid_wallet")
        }
    }

    @Test func feedAccessIsRequiredAndMustBeTheWallets() async throws {
        try await withChannel { client in
            #expect(try await getSubscriptions(client, authorization: nil).errorCode == "unauthorized")
            #expect(try await getSubscriptions(client, authorization: "Bearer abc").errorCode == "unauthorized")
            #expect(try await getSubscriptions(client, authorization: "Herald !!!").errorCode == "unauthorized")
            let other = try Self.feedAccess(wallet: Self.channelKey.address, by: Self.channelKey)
            #expect(try await getSubscriptions(client, authorization: other).errorCode == "unauthorized")
            let wrongAudience = try Self.feedAccess(audience: "https://elsewhere.example")
            #expect(try await getSubscriptions(client, authorization: wrongAudience).errorCode == "wrong_audience")
            let forged = try Self.feedAccess(wallet: F.key.address, by: Self.channelKey)
            #expect(try await getSubscriptions(client, authorization: forged).errorCode == "signature_mismatch")
            // An accepted FeedAccess publishes the wallet's key.
            #expect(try await getSubscriptions(client, authorization: try Self.feedAccess()).status == .ok)
            #expect(
                try await client.get("/v1/users/\(F.key.address.checksummed)/pubkey").json?["publicKey"]
                    == .string(F.key.publicKey.hex))
        }
    }
}
