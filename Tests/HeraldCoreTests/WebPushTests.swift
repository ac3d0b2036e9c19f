import Crypto
import Foundation
import HeraldCore
import Testing

@Suite struct WebPushCipherTests {
    static func bytes(_ item: JSONValue, _ key: String) throws -> [UInt8] {
        try #require(Base64URL.decode(try item.string(key)), "\(key) is not base64url")
    }

    @Test func everyVectorEncryptsBitExactAndDecryptsBack() throws {
        let cases = try Vectors.cases("webpush")
        #expect(cases.count == 1)
        for item in cases {
            let plaintext = Array(try item.string("plaintext").utf8)
            let subscriber = try P256.KeyAgreement.PrivateKey(rawRepresentation: try Self.bytes(item, "ua_private"))
            #expect(Array(subscriber.publicKey.x963Representation) == (try Self.bytes(item, "ua_public")))
            let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: try Self.bytes(item, "as_private"))
            #expect(Array(sender.publicKey.x963Representation) == (try Self.bytes(item, "as_public")))
            let auth = try Self.bytes(item, "auth")
            let body = try WebPushCipher.encrypt(
                plaintext, to: subscriber.publicKey, authSecret: auth, ephemeralKey: sender,
                salt: try Self.bytes(item, "salt"))
            #expect(Base64URL.encode(body) == (try item.string("body")))
            let opened = try WebPushCipher.decrypt(
                try Self.bytes(item, "body"), privateKey: subscriber, authSecret: auth)
            #expect(opened == plaintext)
        }
    }

    @Test func freshKeysAndSaltEveryCallAndTheWrongAuthFails() throws {
        let subscriber = P256.KeyAgreement.PrivateKey()
        let auth = SecureRandom.bytes(16)
        let plaintext = Array("{\"notification\":{}}".utf8)
        let first = try WebPushCipher.encrypt(plaintext, to: subscriber.publicKey, authSecret: auth)
        let second = try WebPushCipher.encrypt(plaintext, to: subscriber.publicKey, authSecret: auth)
        #expect(first[0..<16] != second[0..<16])
        #expect(first[21..<86] != second[21..<86])
        #expect(first[16..<21] == [0, 0, 0x10, 0, 65])
        #expect(try WebPushCipher.decrypt(first, privateKey: subscriber, authSecret: auth) == plaintext)
        #expect(throws: WebPushCipher.Failure.self) {
            try WebPushCipher.decrypt(first, privateKey: subscriber, authSecret: SecureRandom.bytes(16))
        }
        #expect(throws: WebPushCipher.Failure.self) {
            try WebPushCipher.decrypt(first, privateKey: P256.KeyAgreement.PrivateKey(), authSecret: auth)
        }
        var tampered = first
        tampered[tampered.count - 1] ^= 1
        #expect(throws: WebPushCipher.Failure.self) {
            try WebPushCipher.decrypt(tampered, privateKey: subscriber, authSecret: auth)
        }
    }

    @Test func theLargestPlaintextFillsExactly4096BytesAndOneMoreIsRefused() throws {
        let subscriber = P256.KeyAgreement.PrivateKey()
        let auth = SecureRandom.bytes(16)
        let body = try WebPushCipher.encrypt(
            [UInt8](repeating: 0x61, count: 3993), to: subscriber.publicKey, authSecret: auth)
        #expect(body.count == 4096)
        #expect(throws: WebPushCipher.Failure.self) {
            try WebPushCipher.encrypt([UInt8](repeating: 0x61, count: 3994), to: subscriber.publicKey, authSecret: auth)
        }
    }
}

@Suite struct WebPushSubscriptionTests {
    static let point = Base64URL.encode(Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation))
    static let auth = Base64URL.encode(SecureRandom.bytes(16))

    func code(_ endpoint: String, p256dh: String = point, auth: String = auth) -> APIErrorCode? {
        do {
            _ = try WebPushSubscription(endpoint: endpoint, p256dh: p256dh, auth: auth)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func acceptedEndpointsKeepTheirQueryAndKeysAreStoredUnpadded() throws {
        #expect(code("https://fcm.googleapis.com/fcm/send/abc:def") == nil)
        #expect(code("https://ntfy.example.org/upAbC123?up=1") == nil)
        #expect(code("https://push.example.org:8443/x") == nil)
        #expect(code("https://8.8.8.8/x") == nil)
        #expect(code("https://[2001:db8::1]:444/x") == nil)
        let padded = try WebPushSubscription(
            endpoint: "https://ntfy.example.org/up?up=1", p256dh: Self.point + "=", auth: Self.auth + "==")
        #expect(padded.endpoint == "https://ntfy.example.org/up?up=1")
        #expect(padded.p256dh == Self.point)
        #expect(padded.auth == Self.auth)
    }

    @Test func malformedEndpointsAreInvalidSubscriptions() {
        for endpoint in [
            "http://push.example.org/x", "push.example.org/x", "https://", "https:///x", "https://user@host/x",
            "https://user:pw@host/x", "https://host/x#frag", "https://host:0/x", "https://host:70000/x",
            "https://host:x/x", "https://ho st/x", "https://host/" + String(repeating: "a", count: 990),
        ] {
            #expect(code(endpoint) == .invalidSubscription, "\(endpoint)")
        }
    }

    @Test func ipLiteralsInRefusedRangesAreRefusedAndNamesAreNot() {
        for host in [
            "127.0.0.1", "10.1.2.3", "100.64.0.1", "169.254.169.254", "172.16.0.1", "192.168.1.1", "0.0.0.0",
            "224.0.0.1", "255.255.255.255", "[::1]", "[::]", "[fc00::1]", "[fe80::1]", "[ff02::1]",
            "[::ffff:127.0.0.1]", "[::ffff:10.0.0.1]", "[::ffff:7f00:1]",
        ] {
            #expect(code("https://\(host)/push") == .invalidSubscription, "\(host)")
        }
        // Names (and non-dotted-quad forms, which are names by RFC 3986) are checked when resolved.
        #expect(code("https://localhost/push") == nil)
        #expect(code("https://127.1/push") == nil)
    }

    @Test func ipv6FormsEmbeddingARefusedIPv4AddressAndSiteLocalAreRefused() throws {
        // NAT64 of a public address (a DNS64 answer) is reached; the embedded address is what counts.
        #expect(code("https://[64:ff9b::8.8.8.8]/push") == nil)
        #expect(code("https://[2002:808:808::1]/push") == nil)
        #expect(code("https://[::8.8.8.8]/push") == nil)
        for host in [
            "[64:ff9b::10.0.0.1]", "[64:ff9b::7f00:1]", "[2002:a00:1::1]", "[2002:7f00:1::]", "[::10.0.0.1]",
            "[::127.0.0.1]", "[::169.254.169.254]", "[fec0::1]", "[feff::1]", "[64:ff9b:1::1]",
            "[64:ff9b:1::8.8.8.8]",
        ] {
            #expect(code("https://\(host)/push") == .invalidSubscription, "\(host)")
        }
    }

    @Test func anAllowedIPv4NetworkAdmitsItsEmbeddedFormsAndAnAllowedIPv6NetworkWhatItContains() throws {
        func code(_ endpoint: String, allowing networks: [String]) -> APIErrorCode? {
            let policy = WebPushNetworkPolicy(allowed: networks.compactMap(IPNetwork.init))
            do {
                _ = try WebPushSubscription(
                    endpoint: endpoint, p256dh: Self.point, auth: Self.auth, policy: policy)
                return nil
            } catch {
                return error.code
            }
        }
        let loopback = ["127.0.0.0/8"]
        for host in ["[64:ff9b::7f00:1]", "[::127.0.0.1]", "[2002:7f00:1::1]", "[::ffff:127.0.0.1]"] {
            #expect(code("https://\(host)/push", allowing: loopback) == nil, "\(host)")
        }
        // Allowing 127.0.0.0/8 admits neither ::1 nor other embedded ranges, nor local-use NAT64.
        for host in ["[::1]", "[64:ff9b::10.0.0.1]", "[64:ff9b:1::7f00:1]"] {
            #expect(code("https://\(host)/push", allowing: loopback) == .invalidSubscription, "\(host)")
        }
        // An allowed IPv6 network admits its addresses whatever IPv4 address they embed.
        #expect(code("https://[64:ff9b::10.0.0.1]/push", allowing: ["64:ff9b::/96"]) == nil)
        #expect(code("https://[fec0::1]/push", allowing: ["fec0::/10"]) == nil)
        #expect(code("https://[64:ff9b:1::1]/push", allowing: ["64:ff9b:1::/48"]) == nil)
    }

    @Test func badKeysAreInvalidSubscriptions() {
        let endpoint = "https://push.example.org/x"
        var offCurve = Array(Base64URL.decode(Self.point) ?? [])
        offCurve[64] ^= 1
        #expect(code(endpoint, p256dh: Base64URL.encode(offCurve)) == .invalidSubscription)
        #expect(code(endpoint, p256dh: Base64URL.encode(Array(offCurve.prefix(33)))) == .invalidSubscription)
        #expect(code(endpoint, p256dh: "not base64!") == .invalidSubscription)
        #expect(code(endpoint, p256dh: "AB=C" + Self.point) == .invalidSubscription)
        #expect(code(endpoint, auth: Base64URL.encode(SecureRandom.bytes(15))) == .invalidSubscription)
        #expect(code(endpoint, auth: Base64URL.encode(SecureRandom.bytes(17))) == .invalidSubscription)
    }

    @Test func originIsTheVAPIDAudience() throws {
        #expect(WebPushEndpoint("https://Push.Example.org/x?up=1")?.origin == "https://push.example.org")
        #expect(WebPushEndpoint("https://push.example.org:443/x")?.origin == "https://push.example.org")
        #expect(WebPushEndpoint("https://localhost:8443/x")?.origin == "https://localhost:8443")
        #expect(WebPushEndpoint("https://[::1]:8443/x")?.origin == "https://[::1]:8443")
    }
}

@Suite struct IPNetworkTests {
    @Test func allowedNetworksOverrideRefusedRangesIncludingMappedForms() throws {
        let loopback = try #require(IPNetwork("127.0.0.0/8"))
        let policy = WebPushNetworkPolicy(allowed: [loopback])
        let v4 = try #require(IPNetwork.parseAddress("127.0.0.1"))
        let mapped = try #require(IPNetwork.parseAddress("::ffff:127.0.0.1"))
        #expect(policy.refusal(of: v4) == nil)
        #expect(policy.refusal(of: mapped) == nil)
        #expect(WebPushNetworkPolicy().refusal(of: v4) == IPNetwork("127.0.0.0/8"))
        #expect(WebPushNetworkPolicy().refusal(of: mapped) == IPNetwork("127.0.0.0/8"))
        let v6 = try #require(IPNetwork.parseAddress("::1"))
        #expect(policy.refusal(of: v6) == IPNetwork("::1/128"))
        #expect(WebPushNetworkPolicy().refusal(of: try #require(IPNetwork.parseAddress("93.184.216.34"))) == nil)
        #expect(WebPushNetworkPolicy().refusal(of: try #require(IPNetwork.parseAddress("2606:4700::1"))) == nil)
        #expect(IPNetwork("::ffff:10.0.0.0/104") == IPNetwork("10.0.0.0/8"))
        #expect(IPNetwork("10.0.0.0/33") == nil)
        #expect(IPNetwork("example.org/8") == nil)
    }
}
