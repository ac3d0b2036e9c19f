import HeraldCore
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// One TLS connection speaking HTTP/2 (ALPN `h2`) to a push service, with its requests multiplexed
/// as streams by ``HTTP2ExchangeHandler``. Once retired (GOAWAY, closed, stalled) it takes no new
/// requests; its pool then makes another.
final class HTTP2Connection: Sendable {
    /// Where to connect: `address` (4 or 16 bytes, as ``IPNetwork`` parses them) pins the IP (Web
    /// Push connects only to an address it checked); without it the bootstrap resolves the host. An
    /// IP literal host gets no SNI, and the certificate is checked against the address.
    struct Target: Sendable {
        var endpoint: WebPushEndpoint
        var address: [UInt8]? = nil

        /// `:authority`: the origin's host, with the port only when it is not 443.
        var authority: Substring { endpoint.origin.dropFirst("https://".count) }
    }

    let channel: any Channel
    private let handler: NIOLoopBound<HTTP2ExchangeHandler>
    private let retiredFlag: RetiredFlag

    private init(channel: any Channel, handler: NIOLoopBound<HTTP2ExchangeHandler>, retiredFlag: RetiredFlag) {
        self.channel = channel
        self.handler = handler
        self.retiredFlag = retiredFlag
    }

    var isRetired: Bool { retiredFlag.value.load(ordering: .relaxed) }

    func send(_ request: PushHTTPRequest, path: String, answerLimit: Int) async throws -> PushHTTPResponse {
        let promise = channel.eventLoop.makePromise(of: PushHTTPResponse.self)
        let handler = self.handler
        if channel.eventLoop.inEventLoop {
            handler.value.start(request, path: path, answerLimit: answerLimit, promise: promise)
        } else {
            channel.eventLoop.execute {
                handler.value.start(request, path: path, answerLimit: answerLimit, promise: promise)
            }
        }
        return try await promise.futureResult.get()
    }

    /// Takes no new requests and closes once the ones under way are answered.
    func retire() {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.retireWhenIdle() }
    }

    /// Our SETTINGS: the streams' windows opened wide enough for any answer we read, so only the
    /// connection's window needs WINDOW_UPDATEs; no server push.
    static let settings: HTTP2Settings = [
        HTTP2Setting(parameter: .enablePush, value: 0),
        HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
    ]

    /// Connects, completes TLS, and checks that the service chose `h2` (else ``HTTP2PushError/notHTTP2``).
    static func connect(
        to target: Target, sslContext: NIOSSLContext, on eventLoop: any EventLoop, timeout: TimeAmount,
        health: HTTP2Health
    ) -> EventLoopFuture<HTTP2Connection> {
        let ready = eventLoop.makePromise(of: HTTP2Connection.self)
        let retiredFlag = RetiredFlag()
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(.seconds(10))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                do {
                    let tls = try NIOSSLClientHandler(
                        context: sslContext,
                        serverHostname: target.endpoint.literalAddress == nil ? target.endpoint.host : nil)
                    let alpn = ApplicationProtocolNegotiationHandler { result, channel in
                        guard result == .negotiated("h2") else {
                            ready.fail(HTTP2PushError.notHTTP2)
                            return channel.close()
                        }
                        do {
                            let exchanges = HTTP2ExchangeHandler(
                                authority: String(target.authority), timeout: timeout, health: health,
                                onRetire: { retiredFlag.value.store(true, ordering: .relaxed) })
                            try channel.pipeline.syncOperations.addHandlers([
                                NIOHTTP2Handler(mode: .client, initialSettings: settings), exchanges,
                            ])
                            ready.succeed(
                                HTTP2Connection(
                                    channel: channel, handler: NIOLoopBound(exchanges, eventLoop: channel.eventLoop),
                                    retiredFlag: retiredFlag))
                        } catch {
                            ready.fail(error)
                            return channel.close()
                        }
                        return channel.eventLoop.makeSucceededVoidFuture()
                    }
                    try channel.pipeline.syncOperations.addHandlers([tls, alpn, FirstError(ready)])
                    // A handshake that fails closes the channel before ALPN completes.
                    channel.closeFuture.whenComplete { _ in ready.fail(HTTP2PushError.connectionClosed) }
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
        let connected: EventLoopFuture<any Channel>
        if let address = target.address {
            do {
                let pinned = try SocketAddress(packedIPAddress: ByteBuffer(bytes: address), port: target.endpoint.port)
                connected = bootstrap.connect(to: pinned)
            } catch {
                connected = eventLoop.makeFailedFuture(error)
            }
        } else {
            connected = bootstrap.connect(host: target.endpoint.host, port: target.endpoint.port)
        }
        connected.whenComplete { result in
            switch result {
            case .failure(let error): ready.fail(error)
            case .success(let channel):
                // A peer that takes the TCP connection and then says nothing would otherwise keep every
                // request for this service waiting on the handshake.
                let deadline = channel.eventLoop.scheduleTask(in: health.handshakeTimeout) {
                    ready.fail(HTTP2PushError.connectionFailed("no TLS handshake within \(health.handshakeTimeout)"))
                    channel.close(promise: nil)
                }
                ready.futureResult.whenComplete { _ in deadline.cancel() }
            }
        }
        return ready.futureResult
    }
}

/// Set by the handler (on the event loop) when its connection retires; read by the pool.
final class RetiredFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// Fails a connection attempt with the first error of its pipeline (a refused certificate, say), so
/// the reason reaches the log rather than a bare "closed"; later errors pass on to the exchanges.
private final class FirstError: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny
    let promise: EventLoopPromise<HTTP2Connection>

    init(_ promise: EventLoopPromise<HTTP2Connection>) { self.promise = promise }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.fireErrorCaught(error)
    }
}
