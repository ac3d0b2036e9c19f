import Crypto
import Foundation
import HeraldCore
import HeraldTesting
import Logging
import NIOCore
import NIOHPACK
import Testing

@testable import HeraldRelay

/// The frame-level HTTP/2 client of APNs, FCM and Web Push, against the local fakes over TLS.
@Suite(.serialized) struct HTTP2PushClientTests {
    typealias F = RelayFixtures

    struct APNsSetup {
        let fake: FakeAPNs
        let transport: HTTP2PushTransport
        let provider: APNsProvider
        let caFile: String

        init(timeout: TimeAmount = .seconds(10), health: HTTP2Health = HTTP2Health()) async throws {
            let key = P256.Signing.PrivateKey()
            fake = try FakeAPNs(
                publicKey: key.publicKey, keyID: "KEY123", teamID: "TEAM45", topic: "org.example.herald")
            try await fake.start()
            caFile = NSTemporaryDirectory() + "fake-apns-\(UUID().uuidString).pem"
            try fake.certificate.writeCertificate(to: caFile)
            transport = try HTTP2PushTransport(caFile: caFile, timeout: timeout, health: health)
            let tokens = APNsTokenAuthority(
                key: key, keyID: "KEY123", teamID: "TEAM45", clock: { Int64(Date().timeIntervalSince1970) })
            provider = APNsProvider(
                transport: transport, tokens: tokens, topic: "org.example.herald", productionHost: fake.url,
                sandboxHost: fake.url, logger: Logger(label: "test"))
        }

        func tearDown() async {
            try? await transport.shutdown()
            await fake.stopAndWait()
            try? FileManager.default.removeItem(atPath: caFile)
        }
    }

    @Test func manyConcurrentPushesGoAsStreamsOfOneConnection() async throws {
        let setup = try await APNsSetup()
        let outcomes = await withTaskGroup(of: PushDelivery.self) { group in
            for index in 0..<300 {
                let token = String(format: "%064x", index + 1)
                group.addTask { await setup.provider.deliver(F.push(token: token)) }
            }
            return await group.reduce(into: [PushDelivery]()) { $0.append($1) }
        }
        #expect(outcomes.count == 300)
        #expect(outcomes.allSatisfy { $0 == .sent }, "\(Set(outcomes))")
        let received = setup.fake.received
        #expect(received.count == 300)
        #expect(Set(received.map(\.deviceToken)).count == 300, "each push once")
        #expect(received.allSatisfy { $0.problems.isEmpty && $0.http2 }, "\(received.map(\.problems))")
        #expect(setup.transport.http2.liveConnections == 1, "one connection carried them all")
        await setup.tearDown()
    }

    @Test func aConnectionThatStopsAnsweringIsDroppedAndTheNextPushGoesOnANewOne() async throws {
        let setup = try await APNsSetup(timeout: .seconds(1))
        #expect(await setup.provider.deliver(F.push()) == .sent)
        let origin = try #require(WebPushEndpoint(setup.fake.url)).origin
        let first = try #require(setup.transport.http2.connection(forKey: origin))

        // The fake holds this answer past the deadline: the push fails (to be retried) and the
        // connection it went on takes nothing more.
        setup.fake.enqueue(.delay(milliseconds: 4000, then: .accept))
        guard case .retryable(let reason, _) = await setup.provider.deliver(F.push()) else {
            Issue.record("an unanswered push is retried")
            return
        }
        #expect(reason.contains("no answer before the deadline"), "\(reason)")
        #expect(first.isRetired)
        try await first.channel.closeFuture.get()
        await #expect(throws: HTTP2PushError.retiredBeforeSending) {
            _ = try await first.send(
                PushHTTPRequest(url: setup.fake.url, headers: [], body: []), path: "/", answerLimit: 10)
        }

        #expect(await setup.provider.deliver(F.push()) == .sent)
        let second = try #require(setup.transport.http2.connection(forKey: origin))
        #expect(second !== first, "a new connection")
        #expect(!second.isRetired)
        await setup.tearDown()
    }

    @Test func aGoAwayLetsTheRequestsItTookFinishAndSendsTheNextOnesOnANewConnection() async throws {
        let setup = try await APNsSetup()
        #expect(await setup.provider.deliver(F.push()) == .sent)
        let origin = try #require(WebPushEndpoint(setup.fake.url)).origin
        let first = try #require(setup.transport.http2.connection(forKey: origin))
        setup.fake.enqueue(.delay(milliseconds: 1500, then: .accept))
        async let taken = setup.provider.deliver(F.push())
        try await Task.sleep(for: .milliseconds(500))
        setup.fake.goAway()
        try await Self.waitUntilRetired(first, seconds: 5)
        #expect(first.isRetired, "GOAWAY retires the connection")
        #expect(await setup.provider.deliver(F.push()) == .sent, "the next push goes on a new connection")
        #expect(setup.transport.http2.connection(forKey: origin) !== first)
        #expect(await taken == .sent, "the push the service took before its GOAWAY is still answered")
        try await first.channel.closeFuture.get()
        #expect(setup.fake.received.count == 3)
        await setup.tearDown()
    }

    @Test func anIdleConnectionWhosePeerFellSilentIsFoundByPingAndReplaced() async throws {
        let setup = try await APNsSetup(health: HTTP2Health(idle: .seconds(1), pingTimeout: .seconds(4)))
        #expect(await setup.provider.deliver(F.push()) == .sent)
        let origin = try #require(WebPushEndpoint(setup.fake.url)).origin
        let first = try #require(setup.transport.http2.connection(forKey: origin))
        // Idle past a PING or two, answered: the connection stays.
        try await Task.sleep(for: .milliseconds(2500))
        #expect(!first.isRetired, "a connection whose PINGs are answered is kept")

        setup.fake.goSilent()
        try await Self.waitUntilRetired(first, seconds: 20)
        #expect(first.isRetired, "an unanswered PING retires the connection")
        #expect(await setup.provider.deliver(F.push()) == .sent, "the next push goes on a new connection")
        #expect(setup.transport.http2.connection(forKey: origin) !== first)
        await setup.tearDown()
    }

    @Test func aServiceThatNeverFinishesTheHandshakeFailsTheSendInsteadOfHoldingIt() async throws {
        let listener = SilentListener()
        let port = try await listener.start()
        let transport = try HTTP2PushTransport(
            caFile: nil, timeout: .seconds(30), health: HTTP2Health(handshakeTimeout: .milliseconds(500)))
        let request = PushHTTPRequest(url: "https://127.0.0.1:\(port)/3/device/ab", headers: [], body: [1])
        do {
            _ = try await transport.send(request)
            Issue.record("a send to a silent service must fail")
        } catch {
            #expect("\(error)".contains("no TLS handshake"), "\(error)")
        }
        try await transport.shutdown()
        await listener.stop()
    }

    @Test(arguments: [true, false])
    func webPushReachesAServiceWithOrWithoutHTTP2AtTheCheckedAddress(http2: Bool) async throws {
        let fake = try FakeWebPush()
        let port = try await fake.start(http2: http2)
        let caFile = NSTemporaryDirectory() + "fake-webpush-\(UUID().uuidString).pem"
        try fake.certificate.writeCertificate(to: caFile)
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        let transport = try GuardedWebPushTransport(
            policy: WebPushNetworkPolicy(allowed: [try #require(IPNetwork("127.0.0.0/8"))]),
            resolver: TableResolver(table: ["localhost": ["127.0.0.1"]]), caFile: caFile, timeout: .seconds(10))
        let endpoint = try #require(WebPushEndpoint("https://localhost:\(port)/push/abc?up=1"))
        // No VAPID header: the fake records the request and refuses it (401), which is enough here.
        let request = PushHTTPRequest(
            url: endpoint.url, headers: [("TTL", "60"), ("Content-Encoding", "aes128gcm")], body: [1, 2, 3])
        let response = try await transport.send(request, to: endpoint)
        #expect(response.status == 401)
        let received = try #require(fake.received.first)
        #expect(received.target == "/push/abc?up=1", "path and query as given")
        #expect(received.headers["ttl"] == "60")
        #expect(received.body == [1, 2, 3])
        #expect(received.http2 == http2)
        #expect(transport.http2.liveConnections == (http2 ? 1 : 0))
        try await transport.shutdown()
        await fake.stopAndWait()
    }

    /// Polls until `connection` retires, giving up after `seconds` (the caller then checks it did).
    static func waitUntilRetired(_ connection: HTTP2Connection, seconds: Int64) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !connection.isRetired && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
    }

    @Test func pushURLsSplitIntoOriginHostPortAndPath() throws {
        let apns = try #require(WebPushEndpoint("https://api.push.apple.com/3/device/ab12"))
        #expect(apns.origin == "https://api.push.apple.com")
        #expect((apns.host, apns.port, apns.path) == ("api.push.apple.com", 443, "/3/device/ab12"))
        #expect(apns.literalAddress == nil)
        let fake = try #require(WebPushEndpoint("https://127.0.0.1:8443/wp/x?up=1"))
        #expect(
            (fake.origin, fake.host, fake.port, fake.path) == (
                "https://127.0.0.1:8443", "127.0.0.1", 8443, "/wp/x?up=1"
            ))
        #expect(fake.literalAddress != nil)
        let v6 = try #require(WebPushEndpoint("https://[::1]:9000?q"))
        #expect((v6.host, v6.port, v6.path) == ("::1", 9000, "/?q"))
        #expect(v6.literalAddress != nil)
        for bad in [
            "http://a/b", "https://", "https://:443/x", "https://u@h/x", "https://h:0/x", "https://h:99999/",
            "https://[::1/x", "https://h:port/x",
        ] {
            #expect(WebPushEndpoint(bad) == nil, "\(bad)")
        }
    }

    @Test func headersHTTP2ForbidsAreLeftOutAndNamesGoLowercase() {
        for name in ["Host", "connection", "Transfer-Encoding", "content-length", "Keep-Alive", "upgrade"] {
            #expect(HTTP2ExchangeHandler.isConnectionSpecific(name), "\(name)")
        }
        #expect(!HTTP2ExchangeHandler.isConnectionSpecific("apns-topic"))
        #expect(HTTP2ExchangeHandler.lowercased("Content-Encoding") == "content-encoding")
        #expect(HTTP2ExchangeHandler.lowercased("ttl") == "ttl")
    }

    /// Fifty APNs requests through one connection's HPACK encoder: with what changes per request kept out of
    /// the dynamic table, the bearer token stays in it and every block after the first is small; with
    /// everything indexed (the way it was), the token is evicted and sent in full again.
    @Test func valuesThatChangePerRequestDoNotEvictTheBearerTokenFromTheHeaderTable() throws {
        let token = "bearer " + String(repeating: "e", count: 300)
        func request(_ index: Int) -> (PushHTTPRequest, path: String) {
            let deviceToken = String(format: "%064x", index)
            let request = PushHTTPRequest(
                url: "https://api.push.apple.com/3/device/" + deviceToken,
                headers: [
                    ("authorization", token), ("apns-topic", "org.example.herald"), ("apns-push-type", "alert"),
                    ("apns-priority", "10"), ("apns-expiration", String(1_800_000_000 + index)),
                    ("apns-id", UUID().uuidString.lowercased()), ("content-type", "application/json"),
                ],
                body: Array(repeating: UInt8(ascii: "x"), count: 100 + index))
            return (request, "/3/device/" + deviceToken)
        }
        func blockSizes(_ headers: (PushHTTPRequest, String) -> HPACKHeaders) throws -> [Int] {
            var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
            return try (0..<50).map { index in
                let (request, path) = request(index)
                var buffer = ByteBuffer()
                try encoder.encode(headers: headers(request, path), to: &buffer)
                return buffer.readableBytes
            }
        }
        let sent = try blockSizes { HTTP2ExchangeHandler.headers(of: $0, path: $1, authority: "api.push.apple.com") }
        #expect(sent[0] > 200, "the first block carries the token")
        #expect(sent.dropFirst().allSatisfy { $0 < 150 }, "\(sent)")
        let allIndexed = try blockSizes { request, path in
            var headers = HPACKHeaders()
            for (name, value, _) in HTTP2ExchangeHandler.headers(
                of: request, path: path, authority: "api.push.apple.com")
            {
                headers.add(name: name, value: value)
            }
            return headers
        }
        #expect(allIndexed.dropFirst().contains { $0 > 200 }, "\(allIndexed)")
        let changing = HTTP2ExchangeHandler.headers(of: request(0).0, path: request(0).path, authority: "a")
        for (name, _, indexing) in changing {
            let perRequest = [":path", "apns-id", "apns-expiration", "content-length"].contains(name)
            #expect(indexing == (perRequest ? .nonIndexable : .indexable), "\(name)")
        }
    }
}
