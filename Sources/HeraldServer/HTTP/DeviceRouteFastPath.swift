import HTTPTypes
import HeraldCore
import Logging
import NIOCore
import NIOHTTPTypes

/// `POST /v1/devices`, the hottest route, answered on the connection's event loop below Hummingbird:
/// the body is gathered as it is read, verified on the loop, the registration handed to the store,
/// and the answer written here. Everything else goes on to Hummingbird unchanged.
///
/// Why: Hummingbird's asynchronous request path (the connection's inbound stream, the request body's
/// stream, the response writer) costs about 12 µs a request over a NIO handler, and a registration
/// about 25 µs of server CPU in all (docs/benchmarks.md, sixth round), a sixth of it.
///
/// The answer is the route's (``DeviceController/answer``), with every stage of ``RequestPolicy``
/// applied on the way, in its order: `step(for:)` says where each one is, and the router's middleware
/// is built from the same list (`RequestPolicyTests` checks that it holds nothing else). A request
/// with `Connection` other than keep-alive, with `Expect`, or that arrives while Hummingbird is still
/// answering an earlier one of this connection goes on to Hummingbird, which answers it the same way.
/// Requests pipelined behind one answered here wait, unread, for its answer.
final class DeviceRouteFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private struct Taken {
        var body: ByteBuffer
        let contentType: String?
        let started: ContinuousClock.Instant
    }

    private enum Phase {
        case idle
        /// A request taken here, its body arriving.
        case reading(Taken)
        /// A request refused before its body was read (rate limit, size): answered at once, as
        /// Hummingbird does, and the rest of its body dropped as it arrives.
        case dropping
        /// A request received whole, its answer on the way.
        case answering
    }

    private let state: ServerState
    private let devices: DeviceController
    private var phase = Phase.idle
    /// Requests handed on to Hummingbird whose answer has not been written yet.
    private var handedOn = 0
    /// Parts that arrived while a request taken here was being answered (pipelining).
    private var held: [HTTPRequestPart] = []
    private var readWanted = false
    private var quiesceWanted = false
    private var removed = false

    init(state: ServerState, devices: DeviceController) {
        self.state = state
        self.devices = devices
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        removed = true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        take(unwrapInboundIn(data), context: context)
    }

    private func take(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        switch (phase, part) {
        case (.answering, _):
            held.append(part)
        case (.idle, .head(let head)):
            if handedOn == 0, isTaken(head) {
                begin(head, context: context)
            } else {
                handedOn += 1
                context.fireChannelRead(wrapInboundOut(part))
            }
        case (.reading(var taken), .body(let chunk)):
            let limit = devices.bodyLimit
            if taken.body.readableBytes + chunk.readableBytes > limit {
                refuse(RequestBody.tooLarge(limit), started: taken.started, context: context)
            } else {
                taken.body.writeImmutableBuffer(chunk)
                phase = .reading(taken)
            }
        case (.reading(let taken), .end):
            phase = .answering
            answer(taken, context: context)
        case (.dropping, .end):
            answered(context: context)
        case (.dropping, .body):
            break
        case (.reading, .head), (.dropping, .head):
            // The decoder never sends a head inside a request.
            context.close(promise: nil)
        case (.idle, _):
            context.fireChannelRead(wrapInboundOut(part))
        }
    }

    /// Whether this request is answered here (else Hummingbird answers it).
    private func isTaken(_ head: HTTPRequest) -> Bool {
        guard head.method == .post, head.path == RouteTable.devices.path, head.headerFields[.expect] == nil else {
            return false
        }
        guard let connection = head.headerFields[.connection] else { return true }
        return connection.lowercased() == "keep-alive"
    }

    /// Starts reading a request taken here, unless its head alone refuses it: the policy's head stages
    /// in its order (the rate limit, then a declared length over the limit).
    private func begin(_ head: HTTPRequest, context: ChannelHandlerContext) {
        let started = ContinuousClock.now
        for stage in RequestPolicy.stages where Self.step(for: stage) == .onHead {
            if let refusal = headRefusal(stage, head, context: context) {
                refuse(refusal, started: started, context: context)
                return
            }
        }
        phase = .reading(
            Taken(
                body: context.channel.allocator.buffer(capacity: 0), contentType: head.headerFields[.contentType],
                started: started))
    }

    /// Where this handler applies a stage of ``RequestPolicy``. No default: a stage added to the policy
    /// does not compile until this says where the fast path applies it.
    enum Step {
        /// By a handler before this one in the channel pipeline.
        case beforeThisHandler
        /// On the request's head, before its body is read (`headRefusal`).
        case onHead
        /// On each body part as it arrives, and once the body is whole (`take`, `answer`).
        case onBody
        /// On the answer as it is written (`write(_:started:context:)`).
        case onAnswer
    }

    static func step(for stage: RequestStage) -> Step {
        switch stage {
        case .connectionGuard: .beforeThisHandler
        case .nulRefusal, .rateLimit: .onHead
        // A declared length on the head; the parts as they arrive (`take`).
        case .bodyLimits: .onHead
        case .mediaType: .onBody
        case .metrics, .errorBody, .headers: .onAnswer
        }
    }

    /// A head stage's refusal of this request, as the router's middleware or `RequestBody` gives it.
    private func headRefusal(
        _ stage: RequestStage, _ head: HTTPRequest, context: ChannelHandlerContext
    ) -> APIError? {
        switch stage {
        case .nulRefusal:
            // Only the exact path is taken here, so this never refuses; checked so that it never can.
            return NULRefusalMiddleware.holdsEncodedNUL(head.path ?? "")
                ? APIError(.badRequest, NULRefusalMiddleware.message) : nil
        case .rateLimit:
            guard let limiter = state.rateLimiter else { return nil }
            let client = RateLimitMiddleware.clientAddress(
                peer: context.channel.remoteAddress, forwardedFor: head.headerFields[.xForwardedFor],
                trustedProxies: state.configuration.http.trustedProxies)
            return limiter.acquire(address: client).map { RateLimitMiddleware.refusal(retryAfter: $0) }
        case .bodyLimits:
            let limit = devices.bodyLimit
            return RequestBody.declaresMoreThan(limit, head.headerFields[.contentLength])
                ? RequestBody.tooLarge(limit) : nil
        case .connectionGuard, .metrics, .errorBody, .mediaType, .headers:
            return nil
        }
    }

    private func refuse(_ error: APIError, started: ContinuousClock.Instant, context: ChannelHandlerContext) {
        write(Answer(error), started: started, context: context)
        phase = .dropping
    }

    private func answer(_ taken: Taken, context: ChannelHandlerContext) {
        guard RequestBody.isJSON(taken.contentType) else {
            write(Answer(RequestBody.notJSON), started: taken.started, context: context)
            answered(context: context)
            return
        }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let state = self.state
        let devices = self.devices
        let body = taken.body
        let started = taken.started
        // Started on this loop, the task runs on it, and the store answers it here (`WaiterHome`).
        Task {
            let answer = await DeviceRouteFastPath.respond(to: body, devices: devices, logger: state.logger)
            let loop = bound.eventLoop
            let write: @Sendable () -> Void = {
                let (handler, context) = bound.value
                handler.write(answer, started: started, context: context)
                handler.answered(context: context)
            }
            if loop.inEventLoop { write() } else { loop.execute(write) }
        }
    }

    /// The route's answer, or its error's (docs/protocol.md §3), as `ErrorMiddleware` gives them.
    private static func respond(to body: ByteBuffer, devices: DeviceController, logger: Logger) async -> Answer {
        do {
            let answer = try await devices.answer(body.readableBytesView, logger: logger)
            if answer.isReplay { devices.metrics.recordIdempotentReplay() }
            return Answer(status: .ok, body: answer.body.jsonBytes, retryAfter: nil, isReplay: answer.isReplay)
        } catch let error as APIError {
            return Answer(error)
        } catch {
            return Answer(ErrorMiddleware.unhandled(error, logger: logger))
        }
    }

    fileprivate struct Answer: Sendable {
        let status: HTTPResponse.Status
        let body: [UInt8]
        let retryAfter: Int?
        /// The first answer of the same operation, given again (docs/protocol.md §11.2).
        var isReplay = false
    }

    private func write(_ answer: Answer, started: ContinuousClock.Instant, context: ChannelHandlerContext) {
        guard !removed else { return }
        var fields = HTTPFields()
        fields[.contentType] = JSONResponse.contentType
        fields[.contentLength] = String(answer.body.count)
        if let retryAfter = answer.retryAfter { fields[.retryAfter] = String(retryAfter) }
        if answer.isReplay { fields[.idempotentReplay] = "true" }
        fields[.date] = HTTPDate.now()
        fields[.server] = HeraldServerApp.serverName
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: answer.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        state.metrics.recordRequest(
            route: RouteTable.devices.path, method: "POST", status: answer.status.code, duration: .now - started)
    }

    /// The request taken here is over (answered, and its body read): the connection goes on.
    private func answered(context: ChannelHandlerContext) {
        guard !removed else { return }
        phase = .idle
        if quiesceWanted {
            // Shutting down: Hummingbird's connection handler closes the connection now that nothing is
            // being answered; requests pipelined behind this one are not read.
            quiesceWanted = false
            held.removeAll()
            context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            return
        }
        let pipelined = held
        held.removeAll()
        for part in pipelined { take(part, context: context) }
        // Hummingbird's end of the pipeline takes what it was given at the end of a read.
        if !pipelined.isEmpty { context.fireChannelReadComplete() }
        if readWanted, !isAnswering {
            readWanted = false
            context.read()
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), handedOn > 0 { handedOn -= 1 }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        // Reading stops while a request is answered here, so that pipelined requests wait in the socket.
        if isAnswering {
            readWanted = true
        } else {
            context.read()
        }
    }

    private var isAnswering: Bool {
        if case .answering = phase { return true }
        return false
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A shutdown's quiesce waits for the answer of a request taken here (`answered` passes it on).
        if event is ChannelShouldQuiesceEvent, !isIdle {
            quiesceWanted = true
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    private var isIdle: Bool {
        if case .idle = phase { return true }
        return false
    }
}

extension DeviceRouteFastPath.Answer {
    init(_ error: APIError) { self.init(status: error.status, body: error.body, retryAfter: error.retryAfter) }
}

extension HTTPField.Name {
    fileprivate static let expect = Self("Expect")!
}
