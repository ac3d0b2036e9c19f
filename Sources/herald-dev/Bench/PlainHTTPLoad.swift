import HeraldCLISupport
import NIOCore
import NIOHTTP1
import NIOPosix

/// The load of `herald-dev bench register` over plain `http://`, as `wrk` sends it: each connection sends
/// a request, reads its answer, sends the next, on NIO's event loops through NIO's HTTP/1 codec and
/// no client library. AsyncHTTPClient (the fallback for `https://`) took about half a
/// core of a 2-core machine at 5,000 requests/s, which the server then did not have.
enum PlainHTTPLoad {
    /// One keep-alive connection's requests: `bodies[first]`, `bodies[first + stride]`, ….
    static func run(
        bodies: [[UInt8]], host: String, port: Int, path: String, concurrency: Int, progress: ProgressLine?
    ) async throws -> [RegisterBenchLoad.Tally] {
        return try await withThrowingTaskGroup(of: RegisterBenchLoad.Tally.self) { group in
            for first in 0..<min(concurrency, bodies.count) {
                group.addTask {
                    let done = MultiThreadedEventLoopGroup.singleton.next().makePromise(
                        of: RegisterBenchLoad.Tally.self)
                    let requests = stride(from: first, to: bodies.count, by: concurrency).map { bodies[$0] }
                    let channel = try await ClientBootstrap(group: done.futureResult.eventLoop)
                        .channelOption(.socketOption(.tcp_nodelay), value: 1)
                        .channelInitializer { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandlers([
                                    HTTPRequestEncoder(),
                                    ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes)),
                                    PlainHTTPConnection(
                                        requests: requests, host: "\(host):\(port)", path: path, done: done,
                                        progress: progress),
                                ])
                            }
                        }
                        .connect(host: host, port: port).get()
                    let tally = try await done.futureResult.get()
                    try? await channel.close()
                    return tally
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }
}

/// Sends its requests one after another on one connection, timing each answer.
private final class PlainHTTPConnection: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let requests: [[UInt8]]
    private let head: HTTPRequestHead
    private let done: EventLoopPromise<RegisterBenchLoad.Tally>
    private let progress: ProgressLine?
    private var next = 0
    private var sent = NIODeadline.now()
    private var status = 0
    private var tally = RegisterBenchLoad.Tally()

    init(
        requests: [[UInt8]], host: String, path: String, done: EventLoopPromise<RegisterBenchLoad.Tally>,
        progress: ProgressLine?
    ) {
        self.requests = requests
        head = HTTPRequestHead(
            version: .http1_1, method: .POST, uri: path,
            headers: ["Host": host, "Content-Type": "application/json"])
        self.done = done
        self.progress = progress
    }

    func channelActive(context: ChannelHandlerContext) {
        sendNext(context)
        context.fireChannelActive()
    }

    private func sendNext(_ context: ChannelHandlerContext) {
        guard next < requests.count else {
            done.succeed(tally)
            return
        }
        sent = .now()
        var head = self.head
        head.headers.add(name: "Content-Length", value: String(requests[next].count))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(
            wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: requests[next])))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        next += 1
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): status = Int(head.status.code)
        case .body: break
        case .end:
            tally.latencies.append(Double((NIODeadline.now() - sent).nanoseconds) / 1e6)
            tally.statuses[status, default: 0] += 1
            progress?.advance()
            sendNext(context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The server closed the connection: what was not answered counts as transport errors.
        tally.transportErrors += requests.count - tally.latencies.count
        done.succeed(tally)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
