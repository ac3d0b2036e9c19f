import CryptoExtras
import Foundation
public import HeraldCore
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A fake FCM HTTP v1 endpoint with its OAuth2 token endpoint, on loopback (plain HTTP). The token
/// endpoint checks the RS256 assertion of the JWT bearer grant against the service account's public
/// key; the send endpoint checks the bearer token and the message, records it, and answers as scripted.
public final class FakeFCM: Sendable {
    public struct Received: Sendable {
        public let project: String
        public let body: [UInt8]
        public let problems: [String]

        public var message: JSONValue? { (try? JSONParser.parse(body))?["message"] }
    }

    public let projectID: String
    public let clientEmail: String
    let key: _RSA.Signing.PrivateKey
    private let core = FakeServerCore()
    private let log = Mutex<[Received]>([])
    private let grants = Mutex<[String]>([])
    private let issued = Mutex<Set<String>>([])
    private let boundPort = Mutex(0)

    /// Makes a service account with a fresh RSA key; `serviceAccountJSON` is its key file.
    public convenience init(
        projectID: String = "herald-fake", clientEmail: String = "push@herald-fake.iam.gserviceaccount.com"
    ) throws {
        try self.init(projectID: projectID, clientEmail: clientEmail, key: _RSA.Signing.PrivateKey(keySize: .bits2048))
    }

    // The key comes in made: a throwing call among the stored-property initialisers of this class
    // crashed the optimiser of Swift 6.3 (CopyPropagation) in release builds.
    private init(projectID: String, clientEmail: String, key: _RSA.Signing.PrivateKey) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.key = key
    }

    public var url: String { "http://127.0.0.1:\(boundPort.withLock { $0 })" }
    public var tokenURL: String { url + "/token" }

    /// The service-account key file Herald reads (`--fcm-service-account`), pointing at this fake.
    public var serviceAccountJSON: [UInt8] {
        JSONValue.object([
            ("type", .string("service_account")), ("project_id", .string(projectID)),
            ("private_key_id", .string("fake")), ("private_key", .string(key.pemRepresentation)),
            ("client_email", .string(clientEmail)), ("token_uri", .string(tokenURL)),
        ]).jsonBytes
    }

    @discardableResult
    public func start(port: Int = 0) async throws -> Int {
        let bound = try await core.start { onListening in
            let router = Router(context: FakeRequestContext.self)
            router.post("/token") { request, _ in try await self.grant(request) }
            router.post("/v1/projects/:project/messages:send") { request, context in
                try await self.send(request, context: context)
            }
            return Application(
                router: router,
                configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "fake-fcm"),
                onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
                logger: Logger(label: "fake-fcm", factory: { _ in SwiftLogNoOpLogHandler() }))
        }
        boundPort.withLock { $0 = bound }
        return bound
    }

    public func stop() { core.stop() }

    public func stopAndWait() async { await core.stopAndWait() }

    public var received: [Received] { log.withLock { $0 } }

    /// Assertions the token endpoint accepted.
    public var grantCount: Int { grants.withLock { $0.count } }

    public func enqueue(_ answers: FakeAnswer...) { core.enqueue(answers) }

    /// Forgets every access token issued, so that the next send is answered 401.
    public func revokeTokens() { issued.withLock { $0.removeAll() } }

    private func grant(_ request: Request) async throws -> Response {
        let form = String(decoding: try await request.body.collect(upTo: 1 << 16).readableBytesView, as: UTF8.self)
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer",
            let assertion = fields["assertion"],
            verify(assertion)
        else {
            return FakeAnswer.json(400, .object([("error", .string("invalid_grant"))]))
        }
        let token = "fake-access-" + UUID().uuidString
        issued.withLock { _ = $0.insert(token) }
        grants.withLock { $0.append(assertion) }
        return FakeAnswer.json(
            200,
            .object([
                ("access_token", .string(token)), ("expires_in", .number("3600")), ("token_type", .string("Bearer")),
            ]))
    }

    /// RS256 with the account's key; `iss`, `aud` (this token URL), FCM scope, a sane `exp`.
    private func verify(_ assertion: String) -> Bool {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64URL.json(parts[0]), let claims = Base64URL.json(parts[1]),
            let signatureBytes = Base64URL.decode(String(parts[2]))
        else { return false }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signatureBytes)
        guard
            key.publicKey.isValidSignature(
                signature, for: Data("\(parts[0]).\(parts[1])".utf8), padding: .insecurePKCS1v1_5),
            header["alg"] == .string("RS256"), claims["iss"] == .string(clientEmail),
            claims["aud"] == .string(tokenURL),
            claims["scope"]?.stringValue?.contains("https://www.googleapis.com/auth/firebase.messaging") == true,
            case .number(let iat)? = claims["iat"], case .number(let exp)? = claims["exp"],
            let issuedAt = Int64(iat), let expires = Int64(exp), expires > issuedAt, expires - issuedAt <= 3600
        else { return false }
        return true
    }

    /// `android` as FCM takes it: `priority` `high` or `normal` (Herald always sends one); `ttl` a
    /// Duration in its JSON form, whole seconds here (`"3600s"`); `collapse_key` a string.
    static func androidProblems(_ android: JSONValue?) -> [String] {
        var problems: [String] = []
        if ![JSONValue.string("high"), .string("normal")].contains(android?["priority"] ?? .null) {
            problems.append("android.priority is not high or normal")
        }
        if let ttl = android?["ttl"] {
            let text = ttl.stringValue ?? ""
            if !text.hasSuffix("s") || UInt64(text.dropLast()) == nil { problems.append("android.ttl is not \"<n>s\"") }
        }
        if let key = android?["collapse_key"], key.stringValue?.isEmpty != false {
            problems.append("android.collapse_key is not a string")
        }
        return problems
    }

    private func send(_ request: Request, context: FakeRequestContext) async throws -> Response {
        let project = context.parameters.get("project") ?? ""
        let body = Array(try await request.body.collect(upTo: 1 << 20).readableBytesView)
        let bearer = request.headers[.authorization].map { String($0.dropFirst("Bearer ".count)) } ?? ""
        guard issued.withLock({ $0.contains(bearer) }) else {
            return FakeAnswer.json(401, Self.error(401, "UNAUTHENTICATED", nil))
        }
        var problems: [String] = []
        if project != projectID { problems.append("project is \(project)") }
        let message = (try? JSONParser.parse(body))?["message"]
        if message?["token"]?.stringValue?.isEmpty != false { problems.append("message.token is missing") }
        // Herald's pushes show a notification; a Bisq push (docs/protocol.md §8) is data only, `{"encrypted"}`.
        let isBisq = message?["data"]?["encrypted"] != nil
        if !isBisq, message?["notification"]?["title"]?.stringValue == nil {
            problems.append("notification.title is missing")
        }
        if let data = message?["data"]?.objectMembers {
            if !data.allSatisfy({ $0.value.stringValue != nil }) { problems.append("a data value is not a string") }
        } else {
            problems.append("message.data is missing")
        }
        problems += Self.androidProblems(message?["android"])
        log.withLock { $0.append(Received(project: project, body: body, problems: problems)) }
        if !problems.isEmpty { return FakeAnswer.json(400, Self.error(400, "INVALID_ARGUMENT", nil)) }
        switch await core.nextAnswer().settle() {
        case .accept, .delay:
            return FakeAnswer.json(
                200, .object([("name", .string("projects/\(projectID)/messages/\(UUID().uuidString)"))]))
        case .reject(let status, let reason, let retryAfter):
            var response = FakeAnswer.json(
                status, Self.error(status, status == 404 ? "NOT_FOUND" : "UNAVAILABLE", reason))
            if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            return response
        case .drop:
            context.channel.close(promise: nil)
            return FakeAnswer.json(500, Self.error(500, "INTERNAL", nil))
        }
    }

    /// Google's error body; `errorCode` (`UNREGISTERED`, …) in an FcmError detail when given.
    static func error(_ code: Int, _ status: String, _ errorCode: String?) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("code", .number(String(code))), ("status", .string(status))]
        if let errorCode {
            members.append(
                (
                    "details",
                    .array([
                        .object([
                            ("@type", .string("type.googleapis.com/google.firebase.fcm.v1.FcmError")),
                            ("errorCode", .string(errorCode)),
                        ])
                    ])
                ))
        }
        return .object([("error", .object(members))])
    }
}
