import HeraldCore
import Synchronization
import Testing

@testable import HeraldStore

/// The writers' cache of wallets whose key is stored: an entry lapses, so that a key another
/// node's retention deleted is stored again by the wallet's next signature here.
@Suite struct KnownWalletKeysTests {
    final class TestClock: Sendable {
        let start = ContinuousClock.now
        let elapsed = Mutex<Duration>(.zero)
        var now: ContinuousClock.Instant { start + elapsed.withLock { $0 } }
        func advance(_ duration: Duration) { elapsed.withLock { $0 += duration } }
    }

    @Test func anEntryLastsOneToTwoGenerationsAndRemovalIsAtOnce() {
        let clock = TestClock()
        let keys = KnownWalletKeys(generation: .seconds(100), clock: { clock.now })
        let wallet = Fixtures.key.address
        let other = Fixtures.other.address
        keys.insert([wallet, other])
        clock.advance(.seconds(150))
        #expect(keys.contains(wallet), "the previous generation still counts")
        clock.advance(.seconds(100))
        #expect(!keys.contains(wallet), "two generations on, it has lapsed")
        keys.insert([wallet, other])
        keys.remove([other])
        #expect(keys.contains(wallet) && !keys.contains(other))
        clock.advance(.seconds(1_000))
        #expect(!keys.contains(wallet), "a long pause forgets everything")
    }
}
