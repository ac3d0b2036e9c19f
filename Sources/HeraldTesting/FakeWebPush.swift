import Crypto
import Foundation
public import HeraldCore
import Hummingbird
import HummingbirdHTTP2
import HummingbirdTLS
import Logging
import NIOCore
import Synchronization

/// A fake Web Push service (RFC 8030) on loopback over TLS, HTTP/2 (or HTTP/1.1 only, on request),
/// with a certificate made at start for `localhost` and `127.0.0.1`. It takes `POST` on any path (an endpoint
/// is whatever URL it handed out, query included), checks each request as a push service would (VAPID
/// JWT signed by the `k` key for this origin, `aes128gcm` body of at most 4096 bytes, `TTL`,
/// `Urgency`, the form of a `Topic`), records it, and answers by rules: per path, a queue of answers,
/// then 201.
public final class FakeWebPush: Sendable {
    /// One request as received, with what the fake found wrong in it (empty: a request it accepts).
    public struct Received: Sendable {
        /// Path and query, as requested.
        public let target: String
        public let headers: [String: String]
        public let body: [UInt8]
        public let problems: [String]
        /// Claims of the VAPID JWT, when it verified.
        public let vapidClaims: JSONValue?
        /// Whether it came as an HTTP/2 stream.
        public let http2: Bool
    }

    /// How to answer a request.
    public enum Answer: Sendable, Hashable {
        /// This status, with `Retry-After` written as given (any text, so that tests can send what a
        /// hostile service would: a sign, a date, more digits than any integer holds).
        case status(Int, retryAfter: String? = nil)
        /// A redirect a client must not follow.
        case redirect(status: Int, location: String)
    }

    public let certificate: SelfSignedCertificate
    private let core = FakeServerCore()
    private let frameServer = FakeHTTP2Server()
    private let log = Mutex<[Received]>([])
    private let rules = Mutex<[String: [Answer]]>([:])
    private let boundPort = Mutex(0)
    private let counts = Mutex((accepted: 0, answered: 0))
    private let verifiedTokens = Mutex<[String: JSONValue]>([:])
    /// Off for load runs: requests are counted, not kept.
    let keepRequests: Bool

    public convenience init(keepRequests: Bool = true) throws {
        try self.init(certificate: SelfSignedCertificate(commonName: "fake-webpush"), keepRequests: keepRequests)
    }

    // The certificate comes in made: a throwing call among the stored-property initialisers of a
    // class crashes the optimiser of Swift 6.3 (CopyPropagation) in release builds, as FakeFCM notes.
    private init(certificate: SelfSignedCertificate, keepRequests: Bool) {
        self.certificate = certificate
        self.keepRequests = keepRequests
    }

    /// Starts listening on 127.0.0.1 (`port` 0: a free one) and returns the port: over HTTP/2 only,
    /// frame by frame (``FakeHTTP2Server``, cheap enough for benchmarks); without `http2`, as a push
    /// service that speaks only HTTP/1.1 (Hummingbird; ALPN offers nothing else).
    @discardableResult
    public func start(port: Int = 0, http2: Bool = true) async throws -> Int {
        let bound: Int
        if http2 {
            let tls = try certificate.serverConfiguration(protocols: ["h2"])
            bound = try await frameServer.start(port: port, tls: tls) { request in
                .respond(self.respond(target: request.path, headers: request.headers, body: request.body, http2: true))
            }
        } else {
            let tls = try certificate.serverConfiguration(protocols: ["http/1.1"])
            bound = try await core.start { onListening in
                let router = Router(context: FakeRequestContext.self)
                router.post("**") { request, _ in try await self.handleHTTP1(request) }
                return Application(
                    router: router, server: try .tls(.http1(), tlsConfiguration: tls),
                    configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "fake-webpush"),
                    onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
                    logger: Logger(label: "fake-webpush", factory: { _ in SwiftLogNoOpLogHandler() }))
            }
        }
        boundPort.withLock { $0 = bound }
        return bound
    }

    public func stop() { Task { await stopAndWait() } }

    public func stopAndWait() async {
        await frameServer.stopAndWait()
        await core.stopAndWait()
    }

    public var port: Int { boundPort.withLock { $0 } }

    /// An endpoint on this fake under `host` (`localhost` or `127.0.0.1`).
    public func endpoint(_ path: String, host: String = "localhost") -> String { "https://\(host):\(port)\(path)" }

    public var received: [Received] { log.withLock { $0 } }

    public func received(target: String) -> [Received] { received.filter { $0.target == target } }

    /// Requests answered, and those accepted (2xx), since start.
    public var tally: (answered: Int, accepted: Int) { counts.withLock { ($0.answered, $0.accepted) } }

    /// The next answers to requests for `target` (path and query), in order; then 201.
    public func answer(_ target: String, with answers: Answer...) {
        rules.withLock { $0[target, default: []].append(contentsOf: answers) }
    }

    private func handleHTTP1(_ request: Request) async throws -> Response {
        let target = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        let body = Array(try await request.body.collect(upTo: 1 << 16).readableBytesView)
        let headers = request.headers.map { ($0.name.canonicalName, $0.value) }
        let answer = respond(target: target, headers: headers, body: body, http2: false)
        var response = Response(status: .init(code: answer.status))
        for (name, value) in answer.headers {
            switch name {
            case "location": response.headers[.location] = value
            case "retry-after": response.headers[.retryAfter] = value
            default: break
            }
        }
        return response
    }

    /// RFC 8030 §5.4: a topic is at most 32 characters of the URL- and filename-safe base64 alphabet.
    static func isTopic(_ topic: String) -> Bool {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        return (1...32).contains(topic.utf8.count) && topic.utf8.allSatisfy(alphabet.contains)
    }

    /// Checks a request as a push service would, records it, and picks its answer by the rules.
    private func respond(
        target: String, headers fields: [(String, String)], body: [UInt8], http2: Bool
    ) -> FakeHTTP2Server.Response {
        var headers: [String: String] = [:]
        for (name, value) in fields { headers[name] = value }
        var problems: [String] = []
        let claims = checkVAPID(headers["authorization"], problems: &problems)
        if headers["content-encoding"] != "aes128gcm" { problems.append("content-encoding is not aes128gcm") }
        if headers["content-type"] != "application/octet-stream" { problems.append("bad content-type") }
        if headers["ttl"].flatMap(Int.init) == nil { problems.append("TTL is not a number") }
        if !["very-low", "low", "normal", "high"].contains(headers["urgency"] ?? "") { problems.append("bad Urgency") }
        if let topic = headers["topic"], !Self.isTopic(topic) {
            problems.append("Topic is not 1–32 base64url characters")
        }
        if body.count > 4096 { problems.append("the body is over 4096 bytes") }
        if body.count < 86 + 17 || body[16..<21] != [0, 0, 0x10, 0, 65] { problems.append("not an aes128gcm header") }
        counts.withLock { $0.answered += 1 }
        if keepRequests {
            log.withLock {
                $0.append(
                    Received(
                        target: target, headers: headers, body: body, problems: problems, vapidClaims: claims,
                        http2: http2))
            }
        }
        if claims == nil { return .init(status: 401) }
        if !problems.isEmpty { return .init(status: 400) }
        let next = rules.withLock { rules -> Answer? in
            guard var queue = rules[target], !queue.isEmpty else { return nil }
            let first = queue.removeFirst()
            rules[target] = queue
            return first
        }
        switch next {
        case nil:
            counts.withLock { $0.accepted += 1 }
            return .init(status: 201, headers: [("location", "https://localhost/m/\(UUID().uuidString)")])
        case .status(let status, let retryAfter)?:
            if (200..<300).contains(status) { counts.withLock { $0.accepted += 1 } }
            return .init(status: status, headers: retryAfter.map { [("retry-after", $0)] } ?? [])
        case .redirect(let status, let location)?:
            return .init(status: status, headers: [("location", location)])
        }
    }

    /// `vapid t=<JWT>,k=<key>` (RFC 8292 §3): ES256 by `k`, `aud` this fake's origin, `exp` within 24 h, a
    /// `mailto:` or `https:` `sub`. Returns the claims, or nil with a problem noted.
    private func checkVAPID(_ authorization: String?, problems: inout [String]) -> JSONValue? {
        guard let authorization, authorization.hasPrefix("vapid t="), let comma = authorization.firstIndex(of: ","),
            authorization[comma...].hasPrefix(",k=")
        else {
            problems.append("no vapid t=…,k=… authorization")
            return nil
        }
        let jwt = String(authorization[authorization.index(authorization.startIndex, offsetBy: 8)..<comma])
        let keyText = String(authorization[authorization.index(comma, offsetBy: 3)...])
        let now = Int64(Date().timeIntervalSince1970)
        // A token verified once is taken on sight (Herald reuses one per origin for hours): the fake's
        // CPU per push then compares with the fake APNs's. Only its expiry is checked again.
        if let claims = verifiedTokens.withLock({ $0[jwt + keyText] }) {
            guard case .number(let expText)? = claims["exp"], let exp = Int64(expText), exp > now else {
                problems.append("the VAPID token has expired")
                return nil
            }
            return claims
        }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64URL.json(parts[0]), let claims = Base64URL.json(parts[1]),
            let signatureBytes = Base64URL.decode(String(parts[2])),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            let keyBytes = Base64URL.decode(keyText),
            let key = try? P256.Signing.PublicKey(x963Representation: keyBytes)
        else {
            problems.append("the VAPID token or key is malformed")
            return nil
        }
        guard key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)) else {
            problems.append("the VAPID signature does not verify with k")
            return nil
        }
        let origins = ["https://localhost:\(port)", "https://127.0.0.1:\(port)"]
        guard header["alg"] == .string("ES256"), header["typ"] == .string("JWT"),
            let audience = claims["aud"]?.stringValue, origins.contains(audience),
            case .number(let expText)? = claims["exp"], let exp = Int64(expText), exp > now, exp <= now + 86_400,
            let subject = claims["sub"]?.stringValue, subject.hasPrefix("mailto:") || subject.hasPrefix("https:")
        else {
            problems.append("the VAPID token's alg, typ, aud, exp or sub is wrong")
            return nil
        }
        verifiedTokens.withLock { $0[jwt + keyText] = claims }
        return claims
    }
}
