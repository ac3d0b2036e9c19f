import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldStoreSQLite
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// A router-level Herald: real routes, middleware and SQLite store, a fixed clock, no sockets.
struct ServerFixture {
    static let audience = "herald-test"
    static let now: Int64 = 1_763_769_700
    static let key = try! PrivateKey(hex: "0x107be946709e41b7895eea9f2dacf998a0a9124acbb786f0fd1a826101581a07")
    static let other = try! PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
    static let iosToken = String(repeating: "6b1f", count: 16)

    let folder: String
    let state: ServerState

    init(
        configure: (inout HeraldSettings) -> Void = { _ in }, store: (any HeraldStore)? = nil,
        now: Int64 = Self.now
    ) throws {
        folder = NSTemporaryDirectory() + "herald-server-\(UUID().uuidString)"
        var configuration = HeraldSettings()
        configuration.operations.audience = Self.audience
        configuration.database.path = folder + "/herald.sqlite"
        configuration.http.rateLimit = 0
        configure(&configuration)
        let backing = try store ?? SQLiteHeraldStore(path: configuration.database.path)
        state = ServerState(configuration: configuration, store: backing, clock: { now })
    }

    /// Runs `body` against the router, then removes the database.
    func test(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await run(Application(router: HeraldServerApp.makeRouter(state)), .router, body)
    }

    /// Runs `body` against the whole HTTP server on a port of its own (its channel handlers included:
    /// `ConnectionGuard`, `DeviceRouteFastPath`), then removes the database.
    func testLive(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await run(HeraldServerApp.makeApplication(state), .live, body)
    }

    private func run(
        _ app: some ApplicationProtocol, _ setup: TestingSetup,
        _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await app.test(setup, body)
        try? await state.store.close()
    }

    static func binding(
        _ action: DeviceBinding.Action = .register, key: PrivateKey = key, platform: Platform = .ios,
        token: String = iosToken,
        audience: String = audience, nonce: UInt64 = 42, issuedAt: Int64 = now - 100, expiresAt: Int64 = now + 200
    ) -> DeviceBinding {
        DeviceBinding(
            action: action, wallet: key.address, platform: platform, deviceToken: token, audience: audience,
            nonce: UInt256(nonce), issuedAt: UInt256(UInt64(issuedAt)), expiresAt: UInt256(UInt64(expiresAt)))
    }

    static func signed(
        _ binding: DeviceBinding, by signer: PrivateKey = key, scheme: SignatureScheme = .eip712, chainId: UInt64 = 1
    ) throws -> String {
        try binding.signed(with: signer, scheme: scheme, domain: HeraldDomain(chainId: chainId)).jsonText
    }
}

extension TestClientProtocol {
    /// POSTs JSON text to `/v1/devices` (or `uri`) with the JSON content type unless told otherwise.
    @discardableResult
    func post(
        _ body: String, uri: String = "/v1/devices", contentType: String? = "application/json"
    ) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let contentType { headers[.contentType] = contentType }
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    func get(_ uri: String) async throws -> TestResponse {
        try await execute(uri: uri, method: .get)
    }
}

extension TestResponse {
    var json: JSONValue? { try? JSONParser.parse(body.readableBytesView) }
    var errorCode: String? { json?["error"]?["code"]?.stringValue }
    var text: String { String(buffer: body) }
}

extension HTTPField.Name {
    /// On a stored answer given again to the same operation (docs/protocol.md §11.2).
    static let idempotentReplay = Self("Idempotent-Replay")!
}
