import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HummingbirdTesting
import NIOCore
import Testing

/// `POST /v1/notifications` and `GET /v1/users/{wallet}/feeds`: every type, spam marking, the outbox,
/// paging, and the error codes of both.
@Suite struct NotificationRouteTests {
    typealias F = ServerFixture
    typealias S = SubscriptionRouteTests
    static let channelKey = S.channelKey
    /// A wallet that never subscribes.
    static let stranger = try! PrivateKey(hex: "0x" + String(repeating: "0", count: 62) + "2a")

    static func notification(
        _ payload: String, nonce: UInt64, by key: PrivateKey = channelKey, expiresAt: Int64 = F.now + 200
    ) throws -> String {
        let operation = NotificationOperation(
            channel: key.address, payload: payload, audience: F.audience, nonce: UInt256(nonce),
            issuedAt: UInt256(UInt64(F.now - 10)), expiresAt: UInt256(UInt64(expiresAt)))
        return try operation.signed(with: key, scheme: .eip712, domain: HeraldDomain(chainId: 1)).jsonText
    }

    static let draft = NotificationDraft(
        title: "Trade accepted", body: "Your offer was taken", subject: "Offer 17", message: "Pay 0.1 ETH within 2 h",
        callToAction: "https://t.example/17", image: "https://t.example/17.png")

    /// A channel with `F.key` subscribed and registered on one iOS device.
    func withSubscriber(_ body: @Sendable @escaping (any TestClientProtocol) async throws -> Void) async throws {
        try await S().withChannel { client in
            #expect(
                try await client.post(try S.signed(S.subscription(nonce: 900)), uri: "/v1/subscriptions").status == .ok)
            #expect(try await client.post(try F.signed(F.binding(nonce: 901))).status == .ok)
            try await body(client)
        }
    }

    func feeds(
        _ client: any TestClientProtocol, query: String = "", wallet: PrivateKey = F.key
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/users/\(wallet.address.checksummed)/feeds\(query)", method: .get,
            headers: [.authorization: try S.feedAccess(wallet: wallet.address, by: wallet)])
    }

    static func items(_ response: TestResponse) -> [JSONValue] {
        guard case .array(let items)? = response.json?["feeds"] else { return [] }
        return items
    }

    @Test func aTargetedMessageReachesTheFeedInTheEPNSShape() async throws {
        try await withSubscriber { client async throws in
            let sent = try await client.post(
                try Self.notification(Self.draft.targetedPayload(to: [F.key.address]), nonce: 1),
                uri: "/v1/notifications")
            #expect(sent.status == .accepted, "\(sent.text)")
            #expect(sent.json?["recipients"] == .number("1"))
            #expect(sent.json?["pushes"] == .number("1"))
            guard case .array(let sids)? = sent.json?["sid"], let sid = sids.first?.stringValue else {
                Issue.record("no sid list: \(sent.text)")
                return
            }
            let listed = try await feeds(client)
            #expect(listed.status == .ok, "\(listed.text)")
            #expect(listed.json?["itemcount"] == .number("1"))
            let item = try #require(Self.items(listed).first)
            #expect(item["payload_id"] == .number(sid))
            #expect(item["sender"] == .string(Self.channelKey.address.checksummed))
            #expect(item["epoch"] == .string(String(F.now * 1000)))
            let payload = try #require(item["payload"])
            #expect(payload["notification"]?["title"] == .string("Trade accepted"))
            #expect(payload["notification"]?["body"] == .string("Your offer was taken"))
            let data = try #require(payload["data"]?.objectMembers)
            #expect(data.allSatisfy { $0.value.stringValue != nil }, "every data value is a string")
            let expected: [String: String] = [
                "type": "3", "sid": sid, "epoch": String(F.now * 1000), "app": "Trades",
                "icon": "https://i.example/t.png", "url": "https://t.example", "secret": "", "asub": "Offer 17",
                "amsg": "Pay 0.1 ETH within 2 h", "acta": "https://t.example/17", "aimg": "https://t.example/17.png",
            ]
            #expect(Dictionary(uniqueKeysWithValues: data.map { ($0.key, $0.value.stringValue ?? "") }) == expected)
        }
    }

    @Test func aRecipientWhoDoesNotFollowGetsSpamAndNoPush() async throws {
        try await withSubscriber { client async throws in
            let sent = try await client.post(
                try Self.notification(
                    Self.draft.targetedPayload(to: [F.key.address, Self.stranger.address]), nonce: 2),
                uri: "/v1/notifications")
            #expect(sent.status == .accepted, "\(sent.text)")
            #expect(sent.json?["recipients"] == .number("2"))
            #expect(sent.json?["pushes"] == .number("1"))
            #expect(try await feeds(client, wallet: Self.stranger).json?["itemcount"] == .number("0"))
            let spam = try await feeds(client, query: "?spam=true", wallet: Self.stranger)
            #expect(spam.json?["itemcount"] == .number("1"))
            #expect(Self.items(spam).first?["payload"]?["data"]?["type"] == .string("4"))
            #expect(try await feeds(client, query: "?spam=true").json?["itemcount"] == .number("0"))
        }
    }

    @Test func aBroadcastGoesToEverySubscriberWithContiguousSids() async throws {
        try await withSubscriber { client async throws in
            // A second subscriber without a device: an item, no push.
            let second = Subscription(
                action: .subscribe, channel: Self.channelKey.address, subscriber: Self.stranger.address,
                audience: F.audience, nonce: UInt256(1), issuedAt: UInt256(UInt64(F.now - 10)),
                expiresAt: UInt256(UInt64(F.now + 200)))
            #expect(
                try await client.post(try S.signed(second, by: Self.stranger), uri: "/v1/subscriptions").status == .ok)
            let sent = try await client.post(
                try Self.notification(Self.draft.broadcastPayload(), nonce: 3), uri: "/v1/notifications")
            #expect(sent.status == .accepted, "\(sent.text)")
            #expect(sent.json?["recipients"] == .number("2"))
            #expect(sent.json?["pushes"] == .number("1"))
            guard case .array(let sids)? = sent.json?["sid"] else { return }
            let numbers = sids.compactMap { $0.stringValue.flatMap { Int64($0) } }
            #expect(numbers.count == 2 && numbers[1] == numbers[0] + 1)
            #expect(
                Self.items(try await feeds(client, wallet: Self.stranger)).first?["payload"]?["data"]?["type"]
                    == .string("1"))
        }
    }

    @Test func aSecretMessageShowsGenericTextAndOnlyItsRecipientReadsIt() async throws {
        try await withSubscriber { client async throws in
            let payload = try Self.draft.secretPayload(
                to: [(F.key.address, F.key.publicKey), (Self.stranger.address, Self.stranger.publicKey)])
            let sent = try await client.post(try Self.notification(payload, nonce: 4), uri: "/v1/notifications")
            #expect(sent.status == .accepted, "\(sent.text)")
            let item = try #require(Self.items(try await feeds(client)).first)
            let payloadJSON = try #require(item["payload"])
            #expect(payloadJSON["notification"]?["title"] == .string("Trades has sent you a secret message!"))
            #expect(payloadJSON["notification"]?["body"] == .string("Open Herald to read it."))
            let data = try #require(payloadJSON["data"])
            #expect(data["type"] == .string("2"))
            #expect(data["amsg"] != .string(Self.draft.message))
            let secret = try ECIES.decryptText(try #require(data["secret"]?.stringValue), with: F.key)
            #expect(secret.count == 15)
            #expect(
                try CryptoJSAES.decrypt(try #require(data["amsg"]?.stringValue), passphrase: secret)
                    == Self.draft.message)
            #expect(
                try CryptoJSAES.decrypt(try #require(data["acta"]?.stringValue), passphrase: secret)
                    == Self.draft.callToAction)
            #expect(throws: HeraldError.self) {
                try ECIES.decryptText(data["secret"]?.stringValue ?? "", with: Self.stranger)
            }
        }
    }

    @Test func unknownChannelsAreForbiddenAndSpendNothing() async throws {
        let fixture = try F()
        try await fixture.test { client in
            let body = try Self.notification(Self.draft.targetedPayload(to: [F.key.address]), nonce: 7)
            #expect(try await client.post(body, uri: "/v1/notifications").errorCode == "forbidden")
            try await fixture.state.store.saveChannel(
                ChannelRecord(address: Self.channelKey.address, name: "Late", icon: "", url: "", createdAt: 1))
            let accepted = try await client.post(body, uri: "/v1/notifications")
            #expect(accepted.status == .accepted && accepted.headers[.idempotentReplay] == nil)
            // The same send again: its first answer, sids included, and no second item (§11.2).
            let again = try await client.post(body, uri: "/v1/notifications")
            #expect(again.status == .accepted && again.headers[.idempotentReplay] == "true")
            #expect(Array(again.body.readableBytesView) == Array(accepted.body.readableBytesView))
            let other = try Self.notification(Self.draft.targetedPayload(to: [F.other.address]), nonce: 7)
            #expect(try await client.post(other, uri: "/v1/notifications").errorCode == "replayed")
            #expect(try await fixture.state.store.feed(of: F.key.address, spam: true, limit: 10, offset: 0).total == 1)
        }
    }

    @Test func payloadFaultsGetTheirCodes() async throws {
        try await withSubscriber { client async throws in
            func code(_ payload: String, _ nonce: UInt64) async throws -> String? {
                try await client.post(try Self.notification(payload, nonce: nonce), uri: "/v1/notifications").errorCode
            }
            #expect(try await code("not json", 10) == "invalid_payload")
            #expect(
                try await code(#"{"notification":{"title":"t","body":"b"},"data":{"type":"5"}}"#, 11)
                    == "invalid_payload")
            #expect(
                try await code(
                    #"{"notification":{"title":"t","body":"b"},"data":{"type":"3"},"recipients":"0x12"}"#, 12)
                    == "invalid_wallet")
            let long = NotificationDraft(title: String(repeating: "é", count: 81), body: "b")
            #expect(try await code(long.targetedPayload(to: [F.key.address]), 13) == "field_too_long")
            // A refused payload spent no nonce.
            #expect(
                try await client.post(
                    try Self.notification(Self.draft.broadcastPayload(), nonce: 10), uri: "/v1/notifications"
                ).status == .accepted)
            let signedByOther = try Self.notification(Self.draft.broadcastPayload(), nonce: 14, by: F.key)
            #expect(try await client.post(signedByOther, uri: "/v1/notifications").errorCode == "forbidden")
        }
    }

    @Test func aThousandSecretRecipientsFitTheLargerBodyLimit() async throws {
        try await withSubscriber { client async throws in
            let keys = (1...1000).map {
                try! PrivateKey(bytes: Array(repeating: 0, count: 30) + [UInt8($0 >> 8), UInt8($0 & 0xff)])
            }
            let payload = try Self.draft.secretPayload(to: keys.map { ($0.address, $0.publicKey) })
            let body = try Self.notification(payload, nonce: 20)
            #expect(body.utf8.count > 65_536)
            let sent = try await client.post(body, uri: "/v1/notifications")
            #expect(sent.status == .accepted, "\(sent.text.prefix(300))")
            #expect(sent.json?["recipients"] == .number("1000"))
            #expect(sent.json?["pushes"] == .number("0"))
            let tooBig = String(repeating: " ", count: 512 * 1024 + 1)
            #expect(try await client.post(tooBig, uri: "/v1/notifications").errorCode == "payload_too_large")
        }
    }

    @Test func feedsPageNewestFirstAndCheckTheirQuery() async throws {
        try await withSubscriber { client async throws in
            for nonce in 30..<35 {
                let draft = NotificationDraft(title: "n\(nonce)", body: "b")
                let sent = try await client.post(
                    try Self.notification(draft.targetedPayload(to: [F.key.address]), nonce: UInt64(nonce)),
                    uri: "/v1/notifications")
                #expect(sent.status == .accepted)
            }
            let first = try await feeds(client, query: "?page=1&limit=2")
            #expect(first.json?["itemcount"] == .number("5"))
            #expect(
                Self.items(first).map { $0["payload"]?["notification"]?["title"] } == [.string("n34"), .string("n33")])
            let last = try await feeds(client, query: "?page=3&limit=2")
            #expect(Self.items(last).map { $0["payload"]?["notification"]?["title"] } == [.string("n30")])
            #expect(Self.items(try await feeds(client, query: "?page=4&limit=2")).isEmpty)
            for bad in ["?page=0", "?limit=0", "?limit=101", "?page=x", "?spam=maybe", "?page=-1"] {
                #expect(try await feeds(client, query: bad).errorCode == "bad_request", "\(bad)")
            }
            #expect(try await feeds(client, query: "?limit=100").status == .ok)
            let noAuth = try await client.get("/v1/users/\(F.key.address.checksummed)/feeds")
            #expect(noAuth.errorCode == "unauthorized" && noAuth.status == .unauthorized)
            let someoneElses = try await client.execute(
                uri: "/v1/users/\(F.key.address.checksummed)/feeds", method: .get,
                headers: [.authorization: try S.feedAccess(wallet: Self.stranger.address, by: Self.stranger)])
            #expect(someoneElses.errorCode == "unauthorized")
        }
    }
}
