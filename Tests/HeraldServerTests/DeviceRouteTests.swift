import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HummingbirdTesting
import Testing

@Suite struct DeviceRouteTests {
    typealias F = ServerFixture

    @Test(arguments: SignatureScheme.allCases)
    func registerRefreshUnregisterAbsent(_ scheme: SignatureScheme) async throws {
        try await F().test { client in
            let registered = try await client.post(try F.signed(F.binding(nonce: 1), scheme: scheme))
            #expect(registered.status == .ok)
            #expect(registered.json?["status"]?.stringValue == "registered")
            #expect(registered.json?["wallet"]?.stringValue == F.key.address.checksummed)
            #expect(registered.json?["deviceToken"]?.stringValue == F.iosToken)
            #expect(
                try await client.post(try F.signed(F.binding(nonce: 2), scheme: scheme)).json?["status"]?.stringValue
                    == "registered")
            #expect(
                try await client.post(try F.signed(F.binding(.unregister, nonce: 3), scheme: scheme)).json?["status"]?
                    .stringValue == "unregistered")
            #expect(
                try await client.post(try F.signed(F.binding(.unregister, nonce: 4), scheme: scheme)).json?["status"]?
                    .stringValue == "absent")
        }
    }

    @Test func iosTokensAreSignedAsSentAndStoredLowercase() async throws {
        let upper = F.iosToken.uppercased()
        try await F().test { client in
            let response = try await client.post(try F.signed(F.binding(token: upper)))
            #expect(response.status == .ok)
            #expect(response.json?["deviceToken"]?.stringValue == F.iosToken)
        }
    }

    @Test func aStandardEIP712SignerIsAccepted() async throws {
        // eth-account's encode_typed_data + sign_message output, from the shared vectors.
        let envelope = try Self.vectorEnvelope("deviceBinding")
        try await F(configure: { $0.operations.audience = "https://push.example.org" }).test { client in
            let response = try await client.post(envelope)
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.json?["status"]?.stringValue == "registered")
        }
        // The android case: chain 137, nonce 2^256 - 1, issuedAt 1.
        let android = try Self.vectorEnvelope("deviceBindingAndroid")
        try await F(configure: { $0.operations.chainId = UInt256(137) }, now: 300).test { client in
            let response = try await client.post(android)
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.json?["status"]?.stringValue == "absent")
        }
    }

    /// The envelope for a vector case: its message with `nonce` as a string, as envelopes carry it.
    static func vectorEnvelope(_ name: String) throws -> String {
        let item = try vectorCase(name)
        guard case .object(let members)? = item["typedData"]?["message"] else { throw VectorError() }
        let message = JSONValue.object(
            members.map { member in
                if member.key == "nonce", case .number(let text) = member.value { return (member.key, .string(text)) }
                return member
            })
        let signature = try vectorSignature(name)
        return JSONValue.object([
            ("scheme", .string("eip712")), ("message", message), ("signature", .string(signature)),
        ]).jsonText
    }

    static func vectorSignature(_ name: String) throws -> String {
        guard let signature = try vectorCase(name)["signature"]?.stringValue else { throw VectorError() }
        return signature
    }

    static func vectorCase(_ name: String) throws -> JSONValue {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("HeraldCoreTests/Vectors/eip712.json")
        guard case .array(let cases)? = try JSONParser.parse(Array(try Data(contentsOf: url)))["cases"],
            let item = cases.first(where: { $0["name"]?.stringValue == name })
        else { throw VectorError() }
        return item
    }

    struct VectorError: Error {}

    @Test func publicKeyIsServedAfterAVerifiedSignatureInEveryWalletForm() async throws {
        try await F().test { client in
            let address = F.key.address
            #expect(try await client.get("/v1/users/\(address.checksummed)/pubkey").errorCode == "not_found")
            #expect(try await client.post(try F.signed(F.binding())).status == .ok)
            for form in [
                address.checksummed, address.lowercased, "eip155:1:\(address.lowercased)",
                "eip155%3A137%3A\(address.lowercased)",
            ] {
                let response = try await client.get("/v1/users/\(form)/pubkey")
                #expect(response.status == .ok, "\(form)")
                #expect(response.json?["publicKey"]?.stringValue == F.key.publicKey.hex)
                #expect(response.json?["wallet"]?.stringValue == address.checksummed)
            }
            #expect(try await client.get("/v1/users/0xnotawallet/pubkey").errorCode == "invalid_wallet")
        }
    }
}
