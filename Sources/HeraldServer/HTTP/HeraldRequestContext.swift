public import Hummingbird
public import NIOCore

/// Hummingbird's request context plus the peer address (for rate limiting by client IP).
public struct HeraldRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer; nil in router tests, where no socket exists.
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
