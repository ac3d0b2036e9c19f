import NIOCore
import NIOPosix
import Synchronization

/// A TCP listener on 127.0.0.1 that takes connections and never reads or writes a byte: a service
/// that hangs mid-handshake, for testing that clients give up on it.
public final class SilentListener: Sendable {
    private let listener = Mutex<(any Channel)?>(nil)

    public init() {}

    /// Starts listening on a free port and returns it.
    public func start() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .bind(host: "127.0.0.1", port: 0).get()
        listener.withLock { $0 = channel }
        return channel.localAddress?.port ?? 0
    }

    public func stop() async {
        let channel = listener.withLock { listener in
            defer { listener = nil }
            return listener
        }
        try? await channel?.close()
    }
}
