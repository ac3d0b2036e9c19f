import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HummingbirdTesting
import NIOCore
import Testing

/// Whatever arrives, the answer is a 4xx with the error body: never a 500, never a crash, and a
/// refused request writes nothing.
@Suite struct MalformedInputTests {
    typealias F = ServerFixture

    @Test func randomAndMutatedBodiesAreAlways4xxAndWriteNothing() async throws {
        let fixture = try F()
        let good = Array(try F.signed(F.binding(nonce: 77)).utf8)
        try await fixture.test { client in
            var rng = SystemRandomNumberGenerator()
            for round in 0..<300 {
                var body: [UInt8]
                if round % 3 == 0 {
                    body = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng)
                    }
                } else {
                    body = good
                    for _ in 0..<Int.random(in: 1...3, using: &rng) {
                        let position = Int.random(in: 0..<body.count, using: &rng)
                        body[position] = UInt8.random(in: 0...255, using: &rng)
                    }
                }
                let response = try await client.execute(
                    uri: "/v1/devices", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(bytes: body))
                if response.status == .ok { continue }  // a mutation in a don't-care spot may still verify
                #expect(
                    (400..<500).contains(response.status.code),
                    "\(response.status) for \(String(decoding: body, as: UTF8.self))")
                #expect(response.errorCode != nil)
            }
            // Nothing but (at most) the one genuine registration was stored.
            #expect(try await fixture.state.store.bindingCount() <= 1)
        }
    }

    @Test func oddPathsAndMethodsAreNeverServerErrors() async throws {
        try await F().test { client in
            for uri in [
                "/", "//", "/v1", "/v1/users//pubkey", "/v1/users/%ZZ/pubkey",
                "/v1/users/\(String(repeating: "a", count: 5000))/pubkey",
                "/v1/devices?x=1", "/metrics/", "/v1/info/extra",
            ] {
                for method in [HTTPRequest.Method.get, .post, .delete, .put, .patch] {
                    let response = try await client.execute(uri: uri, method: method)
                    #expect(response.status.code < 500, "\(method) \(uri): \(response.status)")
                }
            }
        }
    }
}
