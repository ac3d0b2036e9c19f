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
    private var deadline: Scheduled<Void>?
    private var counted = false

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
        arm(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if counted {
            counted = false
            counter.leave()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if counted {
            counted = false
            counter.leave()
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            // Received whole: the handler's own time is not the client's to answer for.
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            // The response is out: the next request has its own time from now.
            arm(context)
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: requestTimeout) {
            loopBound.value.close(promise: nil)
        }
    }
}
