import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTesting
import HummingbirdTesting
import NIOCore
import Testing

/// The inputs a hostile client tries first, on every signed route: each is answered with its §3
/// code, never a 500, and changes nothing.
@Suite struct HostileInputTests {
    typealias F = ServerFixture
    static let routes = ["/v1/devices", "/v1/subscriptions", "/v1/notifications"]

    func post(_ client: any TestClientProtocol, _ body: [UInt8], to uri: String) async throws -> TestResponse {
        try await client.execute(
            uri: uri, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(bytes: body))
    }

    @Test func structurallyHostileBodiesAreBadRequests() async throws {
        let fixture = try F()
        try await fixture.test { client async throws in
            let deep = Array(String(repeating: "[", count: 50_000).utf8)
            let deepObject = Array(
                (String(repeating: #"{"a":"#, count: 5_000) + "1" + String(repeating: "}", count: 5_000)).utf8)
            var invalidUTF8 = Array(#"{"scheme":"eip712","message":{"action":"register"},"signature":"x"}"#.utf8)
            invalidUTF8.insert(contentsOf: [0xC3, 0x28, 0xFF], at: 40)
            let duplicated = Array(#"{"scheme":"eip712","scheme":"eip191","message":{},"signature":"0x"}"#.utf8)
            for uri in Self.routes {
                for body in [
                    deep, deepObject, invalidUTF8, duplicated, [], Array("null".utf8), Array("\u{FEFF}{}".utf8),
                ] {
                    let response = try await post(client, body, to: uri)
                    #expect(response.status == .badRequest, "\(uri): \(response.status) \(response.text.prefix(120))")
                    #expect(response.errorCode == "bad_request", "\(uri)")
                }
            }
            #expect(try await fixture.state.store.bindingCount() == 0)
        }
    }

    @Test func numbersAddressesAndSignaturesAtTheirLimits() async throws {
        try await F().test { client async throws in
            let good = try F.signed(F.binding(nonce: 5))
            func with(_ from: String, _ to: String) -> [UInt8] {
                Array(good.replacingOccurrences(of: from, with: to).utf8)
            }
            let issued = String(F.now - 100)
            let twoTo256 = "115792089237316195423570985008687907853269984665640564039457584007913129639936"
            let cases: [([UInt8], String)] = [
                (with(#""nonce":"5""#, #""nonce":"\#(twoTo256)""#), "bad_request"),
                (with(#""nonce":"5""#, #""nonce":"05""#), "bad_request"),
                (with(#""nonce":"5""#, #""nonce":5"#), "bad_request"),
                (with(#""issuedAt":"\#(issued)""#, #""issuedAt":1e999"#), "bad_request"),
                (with(#""issuedAt":"\#(issued)""#, #""issuedAt":-1"#), "bad_request"),
                (with(F.key.address.checksummed, "0X" + F.key.address.checksummed.dropFirst(2)), "invalid_wallet"),
                (with(F.key.address.checksummed, Self.wrongChecksum(F.key.address.checksummed)), "invalid_wallet"),
                (with(F.key.address.checksummed, F.key.address.checksummed + "00"), "invalid_wallet"),
            ]
            for (body, code) in cases {
                let response = try await post(client, body, to: "/v1/devices")
                #expect(
                    response.errorCode == code, "\(String(decoding: body, as: UTF8.self).prefix(200)): \(response.text)"
                )
            }
            // Every accepted address spelling verifies (the signature covers the EIP-55 form).
            for (index, spelling) in [
                F.key.address.checksummed.lowercased(), "0x" + F.key.address.checksummed.dropFirst(2).uppercased(),
                "eip155:1:" + F.key.address.checksummed, "eip155:" + F.key.address.checksummed,
            ].enumerated() {
                let nonce = UInt64(100 + index)
                let body = try F.signed(F.binding(nonce: nonce)).replacingOccurrences(
                    of: F.key.address.checksummed, with: spelling)
                #expect(try await client.post(body).status == .ok, "\(spelling)")
            }
            // r = 0, v = 29, and the high-s twin (valid ECDSA for the same signer, refused by EIP-2).
            let signature = try #require(try JSONParser.parse(good)["signature"]?.stringValue)
            let r0 = "0x" + String(repeating: "0", count: 64) + signature.dropFirst(66)
            let v29 = String(signature.dropLast(2)) + "1d"
            let highS = HighSSignature.twin(of: try RecoverableSignature(bytes: Hex.decode(signature)))
            for bad in [r0, v29, highS] {
                #expect(
                    try await post(client, with(signature, bad), to: "/v1/devices").errorCode == "bad_signature",
                    "\(bad)")
            }
        }
    }

    /// The address with the case of its first letter flipped: a mixed-case spelling that fails EIP-55.
    static func wrongChecksum(_ address: String) -> String {
        var characters = Array(address)
        if let index = characters.indices.dropFirst(2).first(where: { characters[$0].isLetter }) {
            let character = characters[index]
            characters[index] =
                character.isUppercase ? Character(character.lowercased()) : Character(character.uppercased())
        }
        return String(characters)
    }
}
