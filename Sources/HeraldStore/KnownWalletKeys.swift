package import HeraldCore
import Synchronization

/// A bounded set of wallets whose public key is known to be stored. Only ever a shortcut: forgetting
/// an entry costs one `INSERT … ON CONFLICT DO NOTHING`, never correctness (a wallet's key never changes).
///
/// An entry lasts one to two `generation`s: retention on another node may delete the key of a wallet
/// this node still remembers (one with nothing else stored), and the wallet's next signature after its
/// entry has lapsed stores the key again. A node deleting keys forgets them at once (`remove`).
package final class KnownWalletKeys: Sendable {
    package static let capacity = 100_000
    package static let generation: Duration = .seconds(12 * 3600)

    private struct Generations {
        var current: Set<EthereumAddress> = []
        var previous: Set<EthereumAddress> = []
        var started: ContinuousClock.Instant

        /// Drops what is older than a generation once the current one is over.
        mutating func age(now: ContinuousClock.Instant, generation: Duration) {
            guard now - started >= generation else { return }
            previous = now - started >= generation * 2 ? [] : current
            current = []
            started = now
        }
    }

    private let wallets: Mutex<Generations>
    private let generation: Duration
    private let clock: @Sendable () -> ContinuousClock.Instant

    package init(
        generation: Duration = KnownWalletKeys.generation,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.generation = generation
        self.clock = clock
        wallets = Mutex(Generations(started: clock()))
    }

    package func contains(_ wallet: EthereumAddress) -> Bool {
        let now = clock()
        return wallets.withLock { wallets in
            wallets.age(now: now, generation: generation)
            return wallets.current.contains(wallet) || wallets.previous.contains(wallet)
        }
    }

    package func insert(_ added: some Collection<EthereumAddress>) {
        guard !added.isEmpty else { return }
        let now = clock()
        wallets.withLock { wallets in
            wallets.age(now: now, generation: generation)
            if wallets.current.count + added.count > Self.capacity {
                wallets.current.removeAll(keepingCapacity: true)
                wallets.previous = []
            }
            wallets.current.formUnion(added)
        }
    }

    /// Forgets wallets whose key was deleted (retention), so that their next signature stores it again.
    package func remove(_ removed: some Collection<EthereumAddress>) {
        guard !removed.isEmpty else { return }
        wallets.withLock { wallets in
            wallets.current.subtract(removed)
            wallets.previous.subtract(removed)
        }
    }
}
