public import Crypto
import Foundation
public import HeraldCore
import Logging
import NIOCore
import Synchronization

/// A fake APNs provider API, in the manner of APNSwift's test server: HTTP/2 over TLS on loopback with a
/// certificate made at start, served frame by frame (``FakeHTTP2Server``) so that a push benchmark
/// spends little of the machine on the fake. It checks each request as Apple would (provider token
/// signature and claims against the `.p8` public key, topic, push type, `apns-id`, token form, body and
/// size), records it, and answers as scripted.
public final class FakeAPNs: Sendable {
    /// One request as received, with what the fake found wrong in it (empty: a request APNs accepts).
    public struct Received: Sendable {
        public let path: String
        public let deviceToken: String
        public let headers: [String: String]
        public let body: [UInt8]
        public let problems: [String]
        /// Claims of the provider token, when it verified.
        public let tokenClaims: JSONValue?
        /// Whether it came as an HTTP/2 stream.
        public let http2: Bool

        public var json: JSONValue? { try? JSONParser.parse(body) }
    }

    public let certificate: SelfSignedCertificate
    let publicKey: P256.Signing.PublicKey
    let keyID: String
    let teamID: String
    let topic: String
    private let core = FakeServerCore()
    private let server = FakeHTTP2Server()
    private let log = Mutex<[Received]>([])
    private let boundPort = Mutex(0)
    private let counts = Mutex((accepted: 0, answered: 0))
    /// Provider tokens already verified, with their claims: as APNs does, a token is checked once,
    /// not on every request (which would also spend the benchmark machine's CPU on the fake).
    private let verifiedTokens = Mutex<[String: JSONValue]>([:])
    /// Off for load runs: requests are counted, not kept.
    let keepRequests: Bool

    public init(
        publicKey: P256.Signing.PublicKey, keyID: String, teamID: String, topic: String, keepRequests: Bool = true
    ) throws {
        self.keepRequests = keepRequests
        certificate = try SelfSignedCertificate(commonName: "fake-apns")
        self.publicKey = publicKey
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
    }

    /// Starts listening on 127.0.0.1 (`port` 0: a free one) and returns the port.
    @discardableResult
    public func start(port: Int = 0) async throws -> Int {
        let tls = try certificate.serverConfiguration(protocols: ["h2"])
        let bound = try await server.start(port: port, tls: tls) { request in self.handle(request) }
        boundPort.withLock { $0 = bound }
        return bound
    }

    public func stop() { Task { await server.stopAndWait() } }

    /// Stops reading from the connections open now, as a paused or vanished APNs would (no answers,
    /// no PING acks); new connections are served as before.
    public func goSilent() { server.goSilent() }

    /// Sends GOAWAY on the connections open now (as APNs does before closing one): the requests it
    /// took are still answered; later ones need a new connection.
    public func goAway() { server.goAway() }

    /// Stops and returns once the port is closed (a client then gets "connection refused").
    public func stopAndWait() async { await server.stopAndWait() }

    public var url: String { "https://127.0.0.1:\(boundPort.withLock { $0 })" }

    public var received: [Received] { log.withLock { $0 } }

    /// Requests answered, and those accepted (200), since start.
    public var tally: (answered: Int, accepted: Int) { counts.withLock { ($0.answered, $0.accepted) } }

    /// The next requests' answers, in order; afterwards every request is accepted.
    public func enqueue(_ answers: FakeAnswer...) { core.enqueue(answers) }

    private func handle(_ request: FakeHTTP2Server.Request) -> FakeHTTP2Server.Reply {
        let prefix = "/3/device/"
        guard request.method == "POST", request.path.hasPrefix(prefix) else {
            return .respond(Self.error(request.method == "POST" ? 404 : 405, "BadPath"))
        }
        let path = String(request.path.prefix { $0 != "?" })
        let token = String(path.dropFirst(prefix.count))
        let body = request.body
        var headers: [String: String] = [:]
        for (name, value) in request.headers { headers[name] = value }
        var problems: [String] = []
        let claims = checkToken(headers["authorization"], problems: &problems)
        if headers["apns-topic"] != topic { problems.append("apns-topic is \(headers["apns-topic"] ?? "missing")") }
        if !["alert", "background"].contains(headers["apns-push-type"] ?? "") { problems.append("bad apns-push-type") }
        if let id = headers["apns-id"], UUID(uuidString: id) == nil { problems.append("apns-id is not a UUID") }
        if !(token.count >= 64 && token.count % 2 == 0 && token.allSatisfy(\.isHexDigit)) {
            problems.append("the device token is not hex")
        }
        if body.count > 4096 { problems.append("the body is over 4096 bytes") }
        if (try? JSONParser.parse(body))?["aps"]?.objectMembers == nil { problems.append("the body has no aps object") }
        counts.withLock { $0.answered += 1 }
        if keepRequests {
            log.withLock {
                $0.append(
                    Received(
                        path: path, deviceToken: token, headers: headers, body: body, problems: problems,
                        tokenClaims: claims, http2: true))
            }
        }
        if claims == nil { return .respond(Self.error(403, "InvalidProviderToken")) }
        if !problems.isEmpty { return .respond(Self.error(400, "BadRequest")) }
        let (delay, answer) = core.nextAnswer().afterDelays
        let response: FakeHTTP2Server.Response
        switch answer {
        case .accept, .delay:
            counts.withLock { $0.accepted += 1 }
            response = .init(status: 200, headers: [("apns-id", headers["apns-id"] ?? UUID().uuidString)])
        case .reject(let status, let reason, let retryAfter):
            response = Self.error(status, reason, retryAfter: retryAfter)
        case .drop:
            return .drop
        }
        return delay > 0 ? .after(.milliseconds(Int64(delay)), response) : .respond(response)
    }

    /// Verifies `bearer <ES256 JWT>` as APNs does; returns its claims, or nil with a problem noted.
    private func checkToken(_ authorization: String?, problems: inout [String]) -> JSONValue? {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else {
            problems.append("no bearer provider token")
            return nil
        }
        let jwt = String(authorization.dropFirst(7))
        if let claims = verifiedTokens.withLock({ $0[jwt] }) { return claims }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64URL.json(parts[0]), let claims = Base64URL.json(parts[1]),
            let signatureBytes = Base64URL.decode(String(parts[2])),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else {
            problems.append("the provider token is not a compact JWS")
            return nil
        }
        guard publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)) else {
            problems.append("the provider token signature does not verify with the .p8 public key")
            return nil
        }
        guard header["alg"] == .string("ES256"), header["kid"] == .string(keyID), claims["iss"] == .string(teamID),
            case .number(let issued)? = claims["iat"], Int64(issued) != nil
        else {
            problems.append("the provider token's alg, kid, iss or iat is wrong")
            return nil
        }
        verifiedTokens.withLock { $0[jwt] = claims }
        return claims
    }

    /// APNs's error body: `{"reason": …}`, with `Retry-After` when given.
    static func error(_ status: Int, _ reason: String, retryAfter: Int? = nil) -> FakeHTTP2Server.Response {
        var headers = [("content-type", "application/json")]
        if let retryAfter { headers.append(("retry-after", String(retryAfter))) }
        return .init(status: status, headers: headers, body: JSONValue.object([("reason", .string(reason))]).jsonBytes)
    }
}

extension Base64URL {
    /// A base64url segment holding JSON (a JWT's header or claims).
    static func json(_ text: some StringProtocol) -> JSONValue? {
        decode(String(text)).flatMap { try? JSONParser.parse($0) }
    }
}
