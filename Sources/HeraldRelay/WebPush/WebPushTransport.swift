import AsyncHTTPClient
import Foundation
public import HeraldCore
public import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// Sends one Web Push request to an endpoint. A protocol so the provider can be tested without sockets.
public protocol WebPushTransport: Sendable {
    /// Throws ``WebPushRefusal`` when the endpoint may not be reached (nothing was sent).
    func send(_ request: PushHTTPRequest, to endpoint: WebPushEndpoint) async throws -> PushHTTPResponse
}

/// An endpoint whose address lies in a refused network (docs/protocol.md §9): the push fails unsent.
public struct WebPushRefusal: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// Resolves a name to every address it has (canonical bytes, as ``IPNetwork/parseAddress(_:)``).
public protocol HostResolver: Sendable {
    func addresses(of host: String, port: Int) async throws -> [[UInt8]]
}

/// docs/protocol.md §9's guard against requests into the operator's network. At send time the host is
/// resolved once (by default through ``CachingHostResolver``: one lookup per name every few seconds);
/// every address of the answer must pass the policy, on every send (one refused address refuses the
/// name); the connection then goes to the first address and to no other: an HTTP/2 connection made
/// to that very address (``HTTP2PushClient``), or, for a service without HTTP/2, AsyncHTTPClient
/// pinned to it through `dnsOverride`, so no second lookup can answer differently. TLS SNI,
/// certificate verification and `:authority` stay on the name. Redirects are never followed. One
/// connection (or client) per (name, address) keeps connections reused.
public final class GuardedWebPushTransport: WebPushTransport {
    let policy: WebPushNetworkPolicy
    let resolver: any HostResolver
    let tls: TLSConfiguration
    let timeout: TimeAmount
    let http2: HTTP2PushClient
    static let answerLimit = 1 << 16
    private let clients = Mutex<[String: HTTPClient]>([:])
    /// Clients kept at once; past it the oldest is shut down (its connections close).
    static let maximumClients = 64
    private let order = Mutex<[String]>([])

    public init(
        policy: WebPushNetworkPolicy, resolver: any HostResolver = CachingHostResolver(SystemHostResolver()),
        caFile: String? = nil,
        timeout: TimeAmount = .seconds(30)
    ) throws {
        let tls = try AsyncHTTPClientTransport.tlsConfiguration(caFile: caFile)
        self.tls = tls
        self.http2 = try HTTP2PushClient(tls: tls, timeout: timeout, maximumConnections: Self.maximumClients)
        self.policy = policy
        self.resolver = resolver
        self.timeout = timeout
    }

    public func send(_ request: PushHTTPRequest, to endpoint: WebPushEndpoint) async throws -> PushHTTPResponse {
        let address = try await checkedAddress(of: endpoint)
        let text = IPNetwork.format(address)
        let key = endpoint.scheme + "|" + endpoint.host + "|" + text
        // HTTP/2 here is over TLS only; an `http://` webhook to the operator's own network (§11.3) goes
        // through AsyncHTTPClient.
        if endpoint.scheme == "https",
            let response = try await http2.send(
                request, path: endpoint.path, key: key,
                target: HTTP2Connection.Target(endpoint: endpoint, address: address),
                answerLimit: Self.answerLimit)
        {
            return response
        }
        // A push service without HTTP/2: AsyncHTTPClient, pinned to the same checked address.
        let client = self.client(
            key: key, host: endpoint.host, address: text, isLiteral: endpoint.literalAddress != nil)
        return try await AsyncHTTPClientTransport.exchange(
            request, on: client, timeout: timeout, answerLimit: Self.answerLimit)
    }

    /// The address to connect to, after checking it and every other address of the name.
    public func checkedAddress(of endpoint: WebPushEndpoint) async throws -> [UInt8] {
        let addresses: [[UInt8]]
        if let literal = endpoint.literalAddress {
            addresses = [literal]
        } else {
            addresses = try await resolver.addresses(of: endpoint.host, port: endpoint.port)
        }
        guard let first = addresses.first else { throw WebPushRefusal("\(endpoint.host) has no address") }
        for address in addresses {
            if let range = policy.refusal(of: address) {
                throw WebPushRefusal(
                    "\(endpoint.host) resolves to \(IPNetwork.format(address)), in the refused network \(range)")
            }
        }
        return first
    }

    private func client(key: String, host: String, address text: String, isLiteral: Bool) -> HTTPClient {
        if let existing = clients.withLock({ $0[key] }) { return existing }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: timeout))
        configuration.httpVersion = .automatic
        // A literal is already the checked address; a name connects to the address checked for it.
        if !isLiteral {
            configuration.dnsOverride[host] = text
            configuration.dnsOverride[host.lowercased()] = text
        }
        let made = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let (chosen, evicted) = clients.withLock { clients -> (HTTPClient, HTTPClient?) in
            if let raced = clients[key] { return (raced, made) }
            clients[key] = made
            let evicted = order.withLock { order -> HTTPClient? in
                order.append(key)
                guard order.count > Self.maximumClients else { return nil }
                return clients.removeValue(forKey: order.removeFirst())
            }
            return (made, evicted)
        }
        if let evicted { Task { try? await evicted.shutdown() } }
        return chosen
    }

    public func shutdown() async throws {
        await http2.shutdown()
        let all = clients.withLock { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        for client in all { try await client.shutdown() }
    }
}
