import Dispatch
import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTesting
import HummingbirdTesting
import Synchronization
import Testing

/// FeedAccess reads go through the per-IP limiter, in the bucket of the POST routes (CLI.md,
/// `--rate-limit`): each accepted one costs a signature recovery and may write the signer's key.
@Suite struct MeteredReadsTests {
    typealias F = ServerFixture

    static func feedAccess(_ key: PrivateKey) throws -> String {
        try FeedAccess(
            wallet: key.address, audience: F.audience, issuedAt: UInt256(UInt64(F.now - 10)),
            expiresAt: UInt256(UInt64(F.now + 200))
        ).signed(with: key, scheme: .eip191, domain: HeraldDomain(chainId: 1)).authorizationHeader
    }

    static func read(
        _ client: any TestClientProtocol, _ path: String, as key: PrivateKey = F.key, authorization: String? = nil
    ) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        headers[.authorization] = try authorization ?? feedAccess(key)
        return try await client.execute(uri: path, method: .get, headers: headers)
    }

    /// Three tokens: a registration and two reads take them; the next read and the next registration
    /// are refused alike. Through the router and through a live server, where `POST /v1/devices` is
    /// answered below Hummingbird by `DeviceRouteFastPath`: one bucket either way.
    @Test func feedAccessReadsAndPostsShareOneBucket() async throws {
        for live in [false, true] {
            let fixture = try F(configure: {
                $0.http.rateLimit = 0.001
                $0.http.rateBurst = 3
                $0.http.port = 0
            })
            let body: @Sendable (any TestClientProtocol) async throws -> Void = { client in
                let wallet = F.key.address.checksummed
                #expect(try await client.post(try F.signed(F.binding(nonce: 1))).status == .ok)
                #expect(try await Self.read(client, "/v1/users/\(wallet)/feeds").status == .ok)
                #expect(try await Self.read(client, "/v1/users/\(wallet)/subscriptions").status == .ok)
                let refused = try await Self.read(client, "/v1/notifications/1")
                #expect(refused.status == .tooManyRequests && refused.errorCode == "rate_limited")
                #expect(refused.headers[.retryAfter].flatMap(Int.init).map { $0 >= 1 } == true)
                #expect(try await Self.read(client, "/v1/users/\(wallet)/feeds").status == .tooManyRequests)
                #expect(try await client.post(try F.signed(F.binding(nonce: 2))).status == .tooManyRequests)
                // Reads without FeedAccess are not metered.
                #expect(try await client.get("/v1/users/\(wallet)/pubkey").status == .ok)
                #expect(try await client.get("/v1/info").status == .ok)
            }
            if live { try await fixture.testLive(body) } else { try await fixture.test(body) }
        }
    }

    /// 20,000 reads, each by a wallet never seen, from one address: the burst is served, every other
    /// read is refused before its signature is looked at, so `wallet_keys` grows by the burst only.
    @Test func twentyThousandReadsByFreshWalletsStoreAtMostTheBurstOfKeys() async throws {
        let burst = 200
        let count = 20_000
        let fixture = try F(configure: {
            $0.http.rateLimit = 0.001
            $0.http.rateBurst = burst
        })
        let started = ContinuousClock.now
        let wallets = (0..<count).map { index in
            try! PrivateKey(
                bytes: Array(repeating: 0x11, count: 28) + withUnsafeBytes(of: UInt32(index + 1).bigEndian, Array.init))
        }
        // Signed on every core: about 0.5 ms an envelope in a debug build, the test's largest cost. On
        // threads of their own, with the addresses: on the test runner's two cooperative threads, the
        // suites running beside this one saw their timers fire a minute late.
        let (headers, addresses) = await onOwnThread { (Self.signedInParallel(wallets), wallets.map(\.address)) }
        let signed = ContinuousClock.now - started
        try await fixture.test { client in
            var statuses: [HTTPResponse.Status: Int] = [:]
            for (address, header) in zip(addresses, headers) {
                let path = "/v1/users/\(address.checksummed)/feeds"
                statuses[try await Self.read(client, path, authorization: header).status, default: 0] += 1
            }
            #expect(statuses == [.ok: burst, .tooManyRequests: count - burst])
            var stored = 0
            for address in addresses where try await fixture.state.store.publicKey(of: address) != nil { stored += 1 }
            #expect(stored == burst, "the served reads stored their keys, the refused ones nothing")
        }
        print("20,000 FeedAccess envelopes signed in \(signed); test took \(ContinuousClock.now - started)")
    }

    static func signedInParallel(_ wallets: [PrivateKey]) -> [String] {
        let slices = 8
        let signed = Mutex([[String]](repeating: [], count: slices))
        DispatchQueue.concurrentPerform(iterations: slices) { slice in
            let part = stride(from: slice, to: wallets.count, by: slices).map { try! feedAccess(wallets[$0]) }
            signed.withLock { $0[slice] = part }
        }
        let parts = signed.withLock { $0 }
        return (0..<wallets.count).map { parts[$0 % slices][$0 / slices] }
    }
}
