import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Connection-level defences against clients that hold the server without finishing anything:
///
/// - a request must arrive whole (head and body) within `requestTimeout` of the connection being
///   ready for it (opened, or the previous response sent), else the connection is closed: a
///   slow-loris trickling bytes holds a connection for that long at most;
/// - at most `limit` connections at once; one more is closed at once, and the others keep being served.
///
/// It sits after HTTP decoding, sees request parts come in and response parts go out.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Open connections, shared by every connection of one server.
    final class Counter: Sendable {
        private let open = Mutex(0)
        func enter(limit: Int) -> Bool {
            open.withLock { count in
                guard count < limit else { return false }
                count += 1
                return true
            }
        }
        func leave() { open.withLock { $0 -= 1 } }
        var current: Int { open.withLock { $0 } }
    }

    private let requestTimeout: TimeAmount
    private let limit: Int
    private let counter: Counter
    /// When the request now awaited began to be the client's to send (the connection opened, or the
    /// last response went out); nil while a request received whole is being answered.
    private var awaitedSince: NIODeadline?
    /// The one check scheduled for this connection, if any.
    ///
    /// Not a timer per request: scheduling one and cancelling it cost two operations on the event
    /// loop's timer heap per request (about 1% of a registration's CPU). A request only notes the time;
    /// the check, when it runs, closes the connection if the awaited request is late, or schedules itself
    /// again for the awaited request's own deadline.
    private var check: Scheduled<Void>?
    private var counted = false
    /// Requests received whole and not answered yet; -1 while a request answered before its body
    /// ended (a 413 or 429 on its head) is still arriving. The client's clock runs when it is 0 or less.
    private var owed = 0

    init(requestTimeout: TimeAmount, limit: Int, counter: Counter) {
        self.requestTimeout = requestTimeout
        self.limit = limit
        self.counter = counter
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard counter.enter(limit: limit) else {
            context.close(promise: nil)
            return
        }
        counted = true
        awaitRequest(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            owed += 1
            if owed > 0 {
                // Received whole: the handler's own time is not the client's to answer for.
                awaitedSince = nil
            } else {
                // Its answer went out before it ended: the next request has its own time from now.
                // (Without this, a client refused on its head could finish the body and then hold the
                // connection for ever: nothing would start the clock again.)
                awaitRequest(context)
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            owed -= 1
            // The response is out and no request received whole waits for its own (pipelining): the
            // next request, or the rest of this one, has its own time from now.
            if owed <= 0 { awaitRequest(context) }
        }
        context.write(data, promise: promise)
    }

    private func stop() {
        check?.cancel()
        check = nil
        awaitedSince = nil
        if counted {
            counted = false
            counter.leave()
        }
    }

    private func awaitRequest(_ context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        awaitedSince = now
        if check == nil { schedule(context, at: now + requestTimeout) }
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        check = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.checkDeadline(context)
        }
    }

    private func checkDeadline(_ context: ChannelHandlerContext) {
        check = nil
        // A request being answered: the next response's write starts the clock (and the check) again.
        guard let since = awaitedSince else { return }
        let deadline = since + requestTimeout
        if NIODeadline.now() >= deadline {
            context.close(promise: nil)
        } else {
            schedule(context, at: deadline)
        }
    }
}
