public import AsyncHTTPClient
import Foundation
import HeraldCore
public import NIOCore
import NIOHTTP1
import NIOSSL

/// One HTTP exchange with a push service. A protocol so that providers can be tested without sockets;
/// the real one is AsyncHTTPClient (HTTP/2 where the server offers it: one connection, many streams).
public protocol PushHTTPTransport: Sendable {
    func send(_ request: PushHTTPRequest) async throws -> PushHTTPResponse
}

public struct PushHTTPRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(method: String = "POST", url: String, headers: [(String, String)], body: [UInt8]) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}

public struct PushHTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// `Retry-After` in seconds when it is a non-negative integer, at most `RemoteNumber.secondsCeiling`
    /// however many digits it has; nil otherwise (an HTTP date, a sign, a fraction), and the backoff applies.
    public var retryAfter: Int64? { header("retry-after").flatMap(RemoteNumber.seconds) }
}

/// AsyncHTTPClient with its own pool: HTTP/2 negotiated by ALPN, an optional extra trusted root (for
/// local fakes), no redirects, a deadline per request.
public final class AsyncHTTPClientTransport: PushHTTPTransport {
    public let client: HTTPClient
    let timeout: TimeAmount

    public init(caFile: String? = nil, timeout: TimeAmount = .seconds(30)) throws {
        let tls = try Self.tlsConfiguration(caFile: caFile)
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: timeout))
        configuration.httpVersion = .automatic
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.timeout = timeout
    }

    public func send(_ request: PushHTTPRequest) async throws -> PushHTTPResponse {
        try await Self.exchange(request, on: client, timeout: timeout, answerLimit: 1 << 20)
    }

    /// One request on `client`, its answer read up to `answerLimit` bytes (shared with the Web Push
    /// transport, which picks a client per checked address).
    static func exchange(
        _ request: PushHTTPRequest, on client: HTTPClient, timeout: TimeAmount, answerLimit: Int
    ) async throws -> PushHTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        outgoing.body = .bytes(ByteBuffer(bytes: request.body))
        let response = try await client.execute(outgoing, timeout: timeout)
        let body = try await response.body.collect(upTo: answerLimit)
        return PushHTTPResponse(
            status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
            body: Array(body.readableBytesView))
    }

    public func shutdown() async throws { try await client.shutdown() }

    /// The system's trusted roots, plus `caFile`'s certificates when given (a local fake's CA).
    static func tlsConfiguration(caFile: String?) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            let certificates: [NIOSSLCertificate]
            do { certificates = try NIOSSLCertificate.fromPEMFile(caFile) } catch {
                throw RelayConfigurationError("cannot read the CA file \(caFile)")
            }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        return tls
    }
}
