import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A small HTTP/2-over-TLS server for fakes that must cost little next to the client they measure:
/// frames handled straight on the connection (no channel per stream, no HTTP/1 translation, no
/// router), one request per stream, answers written as they are decided and flushed once per tick.
/// The fake APNs runs on it, so a push benchmark's CPU goes to Herald rather than to its fake.
final class FakeHTTP2Server: Sendable {
    struct Request: Sendable {
        var method = ""
        var path = ""
        /// Regular fields, lowercase names, in order.
        var headers: [(String, String)] = []
        var body: [UInt8] = []
    }

    struct Response: Sendable {
        var status: Int
        var headers: [(String, String)] = []
        var body: [UInt8] = []
    }

    /// What to do with a request.
    enum Reply: Sendable {
        case respond(Response)
        /// Answers after a while (the connection keeps serving other streams meanwhile).
        case after(TimeAmount, Response)
        /// Closes the connection without answering.
        case drop
    }

    typealias Handler = @Sendable (Request) -> Reply

    private let state = Mutex<(listener: (any Channel)?, connections: [ObjectIdentifier: any Channel])>((nil, [:]))

    /// Listens on 127.0.0.1 (`port` 0: a free one) and returns the port.
    func start(port: Int, tls: TLSConfiguration, handler: @escaping Handler) async throws -> Int {
        var tls = tls
        tls.applicationProtocols = ["h2"]
        let sslContext = try NIOSSLContext(configuration: tls)
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [self] channel in
                track(channel)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        NIOSSLServerHandler(context: sslContext),
                        NIOHTTP2Handler(
                            mode: .server,
                            initialSettings: [
                                HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
                                HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                            ]),
                        FakeHTTP2StreamsHandler(handler: handler),
                    ])
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        state.withLock { $0.listener = listener }
        return listener.localAddress?.port ?? 0
    }

    private func track(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { $0.connections[id] = channel }
        channel.closeFuture.whenComplete { [self] _ in _ = state.withLock { $0.connections.removeValue(forKey: id) } }
    }

    /// Stops reading from every open connection, as a peer that was paused or vanished: nothing is
    /// answered any more, not even a PING. New connections are served as before.
    func goSilent() {
        let connections = state.withLock { Array($0.connections.values) }
        for connection in connections {
            connection.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        }
    }

    /// Sends GOAWAY on every open connection, naming the last stream it took: requests already taken
    /// are still answered there; a client must open a new connection for the next ones.
    func goAway() {
        let connections = state.withLock { Array($0.connections.values) }
        for connection in connections { connection.pipeline.fireUserInboundEventTriggered(GoAway()) }
    }

    struct GoAway: Sendable {}

    /// Stops listening and closes every connection; returns once the listening socket is closed.
    func stopAndWait() async {
        let (listener, connections) = state.withLock { state in
            defer { state = (nil, [:]) }
            return (state.listener, Array(state.connections.values))
        }
        for connection in connections { connection.close(promise: nil) }
        try? await listener?.close()
    }
}

/// The server side of one connection: gathers each stream's request, asks the handler, answers.
private final class FakeHTTP2StreamsHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let handler: FakeHTTP2Server.Handler
    private var requests: [HTTP2StreamID: FakeHTTP2Server.Request] = [:]
    private var flushPending = false
    private var unacknowledgedBytes = 0
    private var closed = false
    private var lastStreamID = HTTP2StreamID(0)

    init(handler: @escaping FakeHTTP2Server.Handler) { self.handler = handler }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is FakeHTTP2Server.GoAway else { return context.fireUserInboundEventTriggered(event) }
        context.writeAndFlush(
            wrapOutboundOut(
                HTTP2Frame(
                    streamID: .rootStream,
                    payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))),
            promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if frame.streamID > lastStreamID { lastStreamID = frame.streamID }
        switch frame.payload {
        case .headers(let payload):
            var request = requests[frame.streamID] ?? FakeHTTP2Server.Request()
            for (name, value, _) in payload.headers {
                switch name {
                case ":method": request.method = value
                case ":path": request.path = value
                case let pseudo where pseudo.hasPrefix(":"): break
                default: request.headers.append((name, value))
                }
            }
            requests[frame.streamID] = request
            if payload.endStream { answer(frame.streamID, context: context) }
        case .data(let payload):
            guard case .byteBuffer(let buffer) = payload.data else { return }
            requests[frame.streamID, default: FakeHTTP2Server.Request()].body.append(
                contentsOf: buffer.readableBytesView)
            acknowledge(buffer.readableBytes, context: context)
            if payload.endStream { answer(frame.streamID, context: context) }
        case .rstStream:
            requests[frame.streamID] = nil
        default:
            break
        }
    }

    private func answer(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let request = requests.removeValue(forKey: streamID) else { return }
        switch handler(request) {
        case .respond(let response):
            write(response, on: streamID, context: context)
        case .after(let delay, let response):
            context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
                guard !closed else { return }
                write(response, on: streamID, context: context)
            }
        case .drop:
            context.close(promise: nil)
        }
    }

    private func write(_ response: FakeHTTP2Server.Response, on streamID: HTTP2StreamID, context: ChannelHandlerContext)
    {
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: String(response.status))
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        let hasBody = !response.body.isEmpty
        if hasBody { headers.add(name: "content-length", value: String(response.body.count)) }
        context.write(
            wrapOutboundOut(
                HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: !hasBody)))),
            promise: nil)
        if hasBody {
            let buffer = context.channel.allocator.buffer(bytes: response.body)
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))),
                promise: nil)
        }
        scheduleFlush(context)
    }

    /// The connection window the requests' bodies used, given back (stream windows are set wide).
    private func acknowledge(_ count: Int, context: ChannelHandlerContext) {
        unacknowledgedBytes += count
        guard unacknowledgedBytes >= 1 << 15 else { return }
        let increment = unacknowledgedBytes
        unacknowledgedBytes = 0
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))),
            promise: nil)
        scheduleFlush(context)
    }

    private func scheduleFlush(_ context: ChannelHandlerContext) {
        guard !flushPending else { return }
        flushPending = true
        context.eventLoop.assumeIsolated().execute { [self] in
            flushPending = false
            guard !closed else { return }
            context.flush()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        requests.removeAll()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
