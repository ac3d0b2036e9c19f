import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// HTTP/2 connections to push services, one per key (an origin, or an origin and the address checked
/// for it) and event loop, made on first use and made again when one retires. Requests that arrive while a
/// connection is being made wait for it rather than each opening their own. A service that does not
/// offer HTTP/2 is remembered, and its requests go elsewhere (the caller's HTTP/1 client).
final class HTTP2PushClient: Sendable {
    private enum Slot {
        case connecting(EventLoopFuture<HTTP2Connection>)
        case ready(HTTP2Connection)
        case http1Only
    }

    /// A connection per service and event loop: a send made on an event loop (as `herald serve` runs
    /// its tasks) uses that loop's connection, so it starts its stream without a thread hop and the
    /// loops share the work of one busy service; a send from elsewhere uses one fixed loop's.
    private struct SlotKey: Hashable {
        let key: String
        let loop: ObjectIdentifier
    }

    private struct Slots {
        var byKey: [SlotKey: Slot] = [:]
        var order: [SlotKey] = []
        /// Services found not to offer HTTP/2, whatever the loop.
        var http1Only: Set<String> = []
    }

    private let sslContext: NIOSSLContext
    private let group: any EventLoopGroup
    private let defaultLoop: any EventLoop
    private let timeout: TimeAmount
    private let maximumConnections: Int
    private let slots = Mutex(Slots())

    private let health: HTTP2Health

    init(
        tls: TLSConfiguration, timeout: TimeAmount, maximumConnections: Int = 64, health: HTTP2Health = HTTP2Health()
    ) throws {
        self.health = health
        var tls = tls
        // http/1.1 offered too, so that a service without HTTP/2 completes the handshake and says so.
        tls.applicationProtocols = ["h2", "http/1.1"]
        sslContext = try NIOSSLContext(configuration: tls)
        group = MultiThreadedEventLoopGroup.singleton
        defaultLoop = group.next()
        self.timeout = timeout
        self.maximumConnections = maximumConnections
    }

    /// Sends on the connection for `key`; nil when that service does not speak HTTP/2.
    func send(
        _ request: PushHTTPRequest, path: String, key: String, target: @autoclosure () -> HTTP2Connection.Target,
        answerLimit: Int
    ) async throws -> PushHTTPResponse? {
        guard let connection = try await connection(key: key, target: target) else { return nil }
        do {
            return try await connection.send(request, path: path, answerLimit: answerLimit)
        } catch let error as HTTP2PushError where error.neverReachedTheService {
            // The connection retired (GOAWAY, a stall, its stream ids used up) before this request
            // left, or the service's GOAWAY says it never took it: once more, on a new connection.
            guard let fresh = try await self.connection(key: key, target: target) else { return nil }
            return try await fresh.send(request, path: path, answerLimit: answerLimit)
        }
    }

    private func connection(key plain: String, target: () -> HTTP2Connection.Target) async throws -> HTTP2Connection? {
        let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? defaultLoop
        let key = SlotKey(key: plain, loop: ObjectIdentifier(loop))
        var made: EventLoopFuture<HTTP2Connection>?
        var evicted: [HTTP2Connection] = []
        let slot = slots.withLock { slots -> Slot in
            if slots.http1Only.contains(plain) { return .http1Only }
            switch slots.byKey[key] {
            case .ready(let connection) where !connection.isRetired: return .ready(connection)
            case .connecting(let future): return .connecting(future)
            case .http1Only: return .http1Only
            case .ready, nil:
                let future = HTTP2Connection.connect(
                    to: target(), sslContext: sslContext, on: loop, timeout: timeout, health: health)
                made = future
                if slots.byKey.updateValue(.connecting(future), forKey: key) == nil { slots.order.append(key) }
                while slots.order.count > maximumConnections {
                    if case .ready(let old)? = slots.byKey.removeValue(forKey: slots.order.removeFirst()) {
                        evicted.append(old)
                    }
                }
                return .connecting(future)
            }
        }
        for old in evicted { old.retire() }
        if let made {
            // Outside the lock: a future that is already complete runs its callback at once.
            made.whenComplete { result in self.settle(key, made, result) }
        }
        switch slot {
        case .ready(let connection): return connection
        case .http1Only: return nil
        case .connecting(let future):
            do { return try await future.get() } catch HTTP2PushError.notHTTP2 { return nil }
        }
    }

    private func settle(
        _ key: SlotKey, _ future: EventLoopFuture<HTTP2Connection>, _ result: Result<HTTP2Connection, any Error>
    ) {
        let orphan = slots.withLock { slots -> HTTP2Connection? in
            guard case .connecting(let current)? = slots.byKey[key], current === future else {
                // Evicted while it was being made: nobody will use it, so it must not stay open.
                if case .success(let connection) = result { return connection }
                return nil
            }
            switch result {
            case .success(let connection): slots.byKey[key] = .ready(connection)
            case .failure(HTTP2PushError.notHTTP2):
                slots.byKey[key] = .http1Only
                slots.http1Only.insert(key.key)
            case .failure:
                // The next request tries again.
                slots.byKey[key] = nil
                slots.order.removeAll { $0 == key }
            }
            return nil
        }
        orphan?.retire()
    }

    /// The connection made for `key`, retired or not (tests look at which one a request used).
    func connection(forKey key: String) -> HTTP2Connection? {
        slots.withLock { slots in
            if case .ready(let connection)? = slots.byKey[SlotKey(key: key, loop: ObjectIdentifier(defaultLoop))] {
                connection
            } else {
                nil
            }
        }
    }

    /// Connections made and not retired.
    var liveConnections: Int {
        slots.withLock { slots in
            slots.byKey.values.count { if case .ready(let connection) = $0 { !connection.isRetired } else { false } }
        }
    }

    func shutdown() async {
        let all = slots.withLock { slots -> [HTTP2Connection] in
            defer { slots = Slots() }
            return slots.byKey.values.compactMap { if case .ready(let connection) = $0 { connection } else { nil } }
        }
        for connection in all { try? await connection.channel.close() }
    }
}
