import HeraldCore
import Synchronization

/// The APNs `thread-id` of a channel's pushes (docs/protocol.md §11.4), its EIP-55 address, remembered:
/// spelling an address hashes it (keccak), and a broadcast's pushes all name one channel. At most
/// `capacity` channels are kept; a full table starts over.
final class ChannelThreads: Sendable {
    static let capacity = 4_096
    private let spelled = Mutex<[EthereumAddress: String]>([:])

    func thread(of channel: EthereumAddress) -> String {
        if let known = spelled.withLock({ $0[channel] }) { return known }
        let text = channel.checksummed
        spelled.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[channel] = text
        }
        return text
    }
}
