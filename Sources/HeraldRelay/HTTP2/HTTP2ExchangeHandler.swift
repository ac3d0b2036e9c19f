import NIOCore
import NIOHPACK
import NIOHTTP2

/// The requests of one HTTP/2 connection to a push service, at the frame level: each request is a
/// HEADERS and a DATA frame on a stream of its own, each answer is gathered from the frames of its
/// stream. No channel per stream, no HTTP/1 translation: a push costs its frames and its promise.
///
/// Writes are flushed once per event-loop tick, so the requests that arrive together leave in one TLS
/// record and one system call. Runs on its channel's event loop only.
final class HTTP2ExchangeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private struct Exchange {
        let promise: EventLoopPromise<PushHTTPResponse>
        let deadline: NIODeadline
        let answerLimit: Int
        var status: Int?
        var headers: [(String, String)] = []
        var body: [UInt8] = []
    }

    private let authority: String
    private let timeout: TimeAmount
    private let health: HTTP2Health
    /// Called once when the connection stops taking requests (GOAWAY, closed, stalled), so its pool
    /// makes a new one for the next request.
    private let onRetire: @Sendable () -> Void
    private var context: ChannelHandlerContext?
    private var exchanges: [HTTP2StreamID: Exchange] = [:]
    private var nextStreamID: Int32 = 1
    private var flushPending = false
    /// No new requests: set on GOAWAY, close, stall or error, and never cleared.
    private var retired = false
    /// Answer bytes read since the last connection WINDOW_UPDATE.
    private var unacknowledgedBytes = 0
    private var sweep: Scheduled<Void>?
    /// When a frame last arrived, and when the PING now awaiting its ack left (nil: none).
    private var lastRead = NIODeadline.now()
    private var pingSent: NIODeadline?

    init(
        authority: String, timeout: TimeAmount, health: HTTP2Health = HTTP2Health(),
        onRetire: @escaping @Sendable () -> Void
    ) {
        self.authority = authority
        self.timeout = timeout
        self.health = health
        self.onRetire = onRetire
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Once a second, requests past their deadline fail. A connection on which one did is retired
        // and closed: a peer that went silent (paused, or a middlebox that dropped the flow) would
        // otherwise keep swallowing requests that never get an answer.
        scheduleSweep(context)
    }

    private func scheduleSweep(_ context: ChannelHandlerContext) {
        sweep = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) { [weak self] in
            guard let self, let context = self.context else { return }
            self.expireOverdue()
            self.checkHealth(context)
            self.scheduleSweep(context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        sweep?.cancel()
        self.context = nil
        failAll(HTTP2PushError.connectionClosed)
    }

    /// Starts one request. Fails at once when the connection no longer takes requests.
    func start(_ request: PushHTTPRequest, path: String, answerLimit: Int, promise: EventLoopPromise<PushHTTPResponse>)
    {
        guard let context, !retired, nextStreamID < Int32.max - 2 else {
            retireWhenIdle()
            promise.fail(HTTP2PushError.retiredBeforeSending)
            return
        }
        let streamID = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        let headers = Self.headers(of: request, path: path, authority: authority)
        let hasBody = !request.body.isEmpty
        exchanges[streamID] = Exchange(
            promise: promise, deadline: .now() + timeout, answerLimit: answerLimit)
        context.write(
            wrapOutboundOut(
                HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: !hasBody)))),
            promise: nil)
        if hasBody {
            let buffer = context.channel.allocator.buffer(bytes: request.body)
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))),
                promise: nil)
        }
        scheduleFlush(context)
    }

    private func scheduleFlush(_ context: ChannelHandlerContext) {
        guard !flushPending else { return }
        flushPending = true
        context.eventLoop.assumeIsolated().execute { [weak self] in
            guard let self, let context = self.context else { return }
            self.flushPending = false
            context.flush()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        lastRead = .now()
        switch frame.payload {
        case .ping(_, ack: true):
            pingSent = nil
        case .headers(let payload):
            readHeaders(payload.headers, of: frame.streamID)
            if payload.endStream { finish(frame.streamID) }
        case .data(let payload):
            guard case .byteBuffer(let buffer) = payload.data else { return }
            acknowledge(buffer.readableBytes, context: context)
            if var exchange = exchanges[frame.streamID] {
                if exchange.body.count + buffer.readableBytes > exchange.answerLimit {
                    exchanges[frame.streamID] = nil
                    exchange.promise.fail(HTTP2PushError.answerTooLarge(limit: exchange.answerLimit))
                    // The rest of that answer is not wanted: the service may stop sending it.
                    context.write(
                        wrapOutboundOut(HTTP2Frame(streamID: frame.streamID, payload: .rstStream(.cancel))),
                        promise: nil)
                    scheduleFlush(context)
                    return
                }
                exchange.body.append(contentsOf: buffer.readableBytesView)
                exchanges[frame.streamID] = exchange
            }
            if payload.endStream { finish(frame.streamID) }
        case .rstStream(let code):
            exchanges.removeValue(forKey: frame.streamID)?.promise.fail(HTTP2PushError.streamReset("\(code)"))
        case .goAway(let lastStreamID, let code, _):
            // Streams above the last one the peer took were never processed: they fail (and the client
            // sends them again at once on a new connection); the others still get their answers.
            retire()
            for streamID in exchanges.keys where streamID > lastStreamID {
                exchanges.removeValue(forKey: streamID)?.promise.fail(HTTP2PushError.goingAway("\(code)"))
            }
            if exchanges.isEmpty { context.close(promise: nil) }
        default:
            break
        }
    }

    private func readHeaders(_ block: HPACKHeaders, of streamID: HTTP2StreamID) {
        guard var exchange = exchanges[streamID] else { return }
        for (name, value, _) in block {
            if name == ":status" {
                guard let status = Int(value) else { continue }
                // 1xx answers are interim; the final status comes in a later block.
                if status >= 200 { exchange.status = status }
            } else if !name.hasPrefix(":") {
                exchange.headers.append((name, value))
            }
        }
        exchanges[streamID] = exchange
    }

    private func finish(_ streamID: HTTP2StreamID) {
        guard let exchange = exchanges.removeValue(forKey: streamID) else { return }
        guard let status = exchange.status else {
            exchange.promise.fail(HTTP2PushError.noStatus)
            return
        }
        exchange.promise.succeed(PushHTTPResponse(status: status, headers: exchange.headers, body: exchange.body))
        if retired && exchanges.isEmpty { context?.close(promise: nil) }
    }

    /// Gives the peer back the connection window that answers used (the streams' own windows are
    /// opened wide by the initial settings; the connection's can only grow by WINDOW_UPDATE).
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

    private func expireOverdue() {
        let now = NIODeadline.now()
        let overdue = exchanges.filter { $0.value.deadline <= now }
        guard !overdue.isEmpty else { return }
        // Retired before anyone hears of the failure, so a retry never picks this connection again.
        retire()
        for (streamID, exchange) in overdue {
            exchanges[streamID] = nil
            exchange.promise.fail(HTTP2PushError.timedOut)
        }
        context?.close(promise: nil)
    }

    /// A connection with nothing to answer is PINGed after `health.idle` without a frame; one whose
    /// PING goes unanswered for `health.pingTimeout` is retired and closed. A connection that died
    /// silently while idle (a NAT's mapping gone, a peer that vanished) is thus replaced before the
    /// next pushes are sent on it, rather than after they have waited out their deadline.
    private func checkHealth(_ context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        if let pingSent {
            guard now - pingSent >= health.pingTimeout else { return }
            retire()
            context.close(promise: nil)
        } else if exchanges.isEmpty, !retired, now - lastRead >= health.idle {
            pingSent = now
            context.writeAndFlush(
                wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(), ack: false))),
                promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        retire()
        failAll(HTTP2PushError.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        retire()
        failAll(HTTP2PushError.connectionFailed(String(describing: error).prefix(120).description))
        context.close(promise: nil)
    }

    /// Takes no new requests; closes once the ones under way are answered.
    func retireWhenIdle() {
        retire()
        if exchanges.isEmpty { context?.close(promise: nil) }
    }

    private func retire() {
        guard !retired else { return }
        retired = true
        onRetire()
    }

    private func failAll(_ error: HTTP2PushError) {
        let all = exchanges
        exchanges.removeAll()
        for exchange in all.values { exchange.promise.fail(error) }
    }

    /// A request's header block. Values that change with every request (the path, which holds an APNs
    /// device token or a Web Push subscription, a message's id and expiry, the body's length) are sent
    /// as literals kept out of HPACK's dynamic table (RFC 7541 §6.2.2). Entered into it, each APNs push
    /// added some 300 bytes of them to its 4,096, evicting within a dozen pushes the values that do
    /// repeat, above all the `authorization` token of about 300 bytes, which was then sent in full again.
    static func headers(of request: PushHTTPRequest, path: String, authority: String) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(request.headers.count + 5)
        headers.add(name: ":method", value: request.method)
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: authority)
        headers.add(name: ":path", value: path, indexing: .nonIndexable)
        for (name, value) in request.headers where !isConnectionSpecific(name) {
            let name = lowercased(name)
            headers.add(name: name, value: value, indexing: changesPerRequest(name) ? .nonIndexable : .indexable)
        }
        if !request.body.isEmpty {
            headers.add(name: "content-length", value: String(request.body.count), indexing: .nonIndexable)
        }
        return headers
    }

    /// Whether a (lowercase) header's value is new with (almost) every request. A switch, as
    /// `isConnectionSpecific` below: a set would hash every header name of every push.
    static func changesPerRequest(_ name: String) -> Bool {
        switch name {
        case "apns-id", "apns-expiration", "apns-collapse-id": true
        default: false
        }
    }

    /// Headers HTTP/2 forbids (RFC 9113 §8.2.2) or carries as pseudo-headers.
    static func isConnectionSpecific(_ name: String) -> Bool {
        switch lowercased(name) {
        case "connection", "host", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "content-length":
            true
        default: false
        }
    }

    /// HTTP/2 field names are lowercase (RFC 9113 §8.2.1); providers' names mostly are already.
    static func lowercased(_ name: String) -> String {
        name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) ? name.lowercased() : name
    }
}

/// When an idle connection is checked with a PING, and how long its ack may take; also how long a
/// new connection may take over its TLS handshake.
struct HTTP2Health: Sendable {
    var idle: TimeAmount = .seconds(60)
    var pingTimeout: TimeAmount = .seconds(10)
    var handshakeTimeout: TimeAmount = .seconds(10)
}

/// How an HTTP/2 exchange with a push service failed before an answer (all worth a retry).
enum HTTP2PushError: Error, CustomStringConvertible, Equatable {
    case connectionClosed
    /// The connection had stopped taking requests when this one came: nothing was sent.
    case retiredBeforeSending
    case connectionFailed(String)
    case timedOut
    case streamReset(String)
    case goingAway(String)
    case noStatus
    case answerTooLarge(limit: Int)
    case notHTTP2

    /// Sure not to have been processed by the service, so worth sending again at once.
    var neverReachedTheService: Bool {
        switch self {
        case .retiredBeforeSending, .goingAway: true
        default: false
        }
    }

    var description: String {
        switch self {
        case .connectionClosed: "the HTTP/2 connection closed before the answer"
        case .retiredBeforeSending: "the HTTP/2 connection was closing; the request was not sent"
        case .connectionFailed(let reason): "the HTTP/2 connection failed: \(reason)"
        case .timedOut: "no answer before the deadline (the connection is dropped)"
        case .streamReset(let code): "the service reset the stream (\(code))"
        case .goingAway(let code): "the service is closing the connection (GOAWAY \(code)) before taking the request"
        case .noStatus: "the answer had no :status"
        case .answerTooLarge(let limit): "the answer is over \(limit) bytes"
        case .notHTTP2: "the service does not offer HTTP/2"
        }
    }
}
