import HeraldCore
import HeraldRelay
import Synchronization
import Testing

/// A resolver whose answers change as a test goes (as DNS does), counting the lookups it was asked.
final class ChangingResolver: HostResolver {
    private let table: Mutex<[String: [String]]>
    private let asked = Mutex(0)

    init(_ table: [String: [String]]) { self.table = Mutex(table) }

    func set(_ host: String, _ addresses: [String]) { table.withLock { $0[host] = addresses } }

    var lookups: Int { asked.withLock { $0 } }

    struct NoSuchName: Error {}

    func addresses(of host: String, port: Int) async throws -> [[UInt8]] {
        asked.withLock { $0 += 1 }
        guard let addresses = table.withLock({ $0[host] }) else { throw NoSuchName() }
        return addresses.compactMap(IPNetwork.parseAddress)
    }
}

/// A continuous-clock instant moved by hand, so that expiry is tested without sleeping.
final class ManualInstant: Sendable {
    private let now = Mutex(ContinuousClock.now)

    func advance(_ duration: Duration) { now.withLock { $0 += duration } }

    var read: @Sendable () -> ContinuousClock.Instant { { [self] in now.withLock { $0 } } }
}

@Suite struct CachingHostResolverTests {
    static func endpoint(_ host: String) throws -> WebPushEndpoint {
        try #require(WebPushEndpoint("https://\(host)/push/1"))
    }

    @Test func anAnswerIsReusedWithinItsLifetimeAndAskedAgainAfter() async throws {
        let upstream = ChangingResolver(["push.example": ["93.184.216.34"]])
        let clock = ManualInstant()
        let resolver = CachingHostResolver(upstream, lifetime: .seconds(5), clock: clock.read)
        let expected = [try #require(IPNetwork.parseAddress("93.184.216.34"))]
        #expect(try await resolver.addresses(of: "push.example", port: 443) == expected)
        clock.advance(.milliseconds(4_999))
        // Names are case-insensitive: one entry for both spellings.
        #expect(try await resolver.addresses(of: "PUSH.example", port: 443) == expected)
        #expect(upstream.lookups == 1)

        upstream.set("push.example", ["93.184.216.35"])
        clock.advance(.milliseconds(1))
        #expect(try await resolver.addresses(of: "push.example", port: 443) == [[93, 184, 216, 35]])
        #expect(upstream.lookups == 2)
    }

    @Test func aFailedLookupIsNotKept() async throws {
        let upstream = ChangingResolver([:])
        let resolver = CachingHostResolver(upstream, clock: ManualInstant().read)
        await #expect(throws: ChangingResolver.NoSuchName.self) {
            _ = try await resolver.addresses(of: "late.example", port: 443)
        }
        upstream.set("late.example", ["93.184.216.34"])
        #expect(try await resolver.addresses(of: "late.example", port: 443) == [[93, 184, 216, 34]])
        #expect(upstream.lookups == 2)
    }

    @Test func aCachedAnswerIsCheckedOnEverySendAndAChangeToARefusedAddressIsRefusedOnceItExpires() async throws {
        let upstream = ChangingResolver([
            "push.example": ["93.184.216.34"], "mixed.example": ["93.184.216.34", "10.0.0.5"],
        ])
        let clock = ManualInstant()
        let transport = try GuardedWebPushTransport(
            policy: WebPushNetworkPolicy(),
            resolver: CachingHostResolver(upstream, lifetime: .seconds(5), clock: clock.read))
        defer { Task { try? await transport.shutdown() } }

        #expect(try await transport.checkedAddress(of: Self.endpoint("push.example")) == [93, 184, 216, 34])
        // A cached answer holding a refused address is refused on each send, not only the first.
        for _ in 0..<3 {
            await #expect(throws: WebPushRefusal.self) {
                _ = try await transport.checkedAddress(of: Self.endpoint("mixed.example"))
            }
        }
        #expect(upstream.lookups == 2)

        // The name moves into a private network (DNS rebinding): refused once the answer has expired.
        upstream.set("push.example", ["93.184.216.34", "169.254.169.254"])
        clock.advance(.seconds(5))
        await #expect(throws: WebPushRefusal.self) {
            _ = try await transport.checkedAddress(of: Self.endpoint("push.example"))
        }
        #expect(upstream.lookups == 3)
    }
}
