import HeraldCore
import Testing

/// Property tests: random and mutated bytes into every parser never crash, only throw.
@Suite struct RobustnessTests {
    static let iterations = 2000

    @Test func randomBytesIntoEveryParserOnlyThrow() {
        var rng = SplitMix64(seed: 0x4655_5a5a)
        let key = PrivateKey.generate()
        for _ in 0..<Self.iterations {
            let bytes = rng.bytes(Int.random(in: 0...200, using: &rng))
            let text = String(decoding: bytes, as: UTF8.self)
            _ = try? JSONParser.parse(bytes)
            _ = try? RawEnvelope.parse(bytes)
            _ = try? RecoverableSignature(bytes: bytes)
            _ = try? RecoverableSignature(bytes: bytes.prefix(65))
            _ = try? PublicKey(bytes: bytes.prefix(33))
            _ = try? PublicKey(bytes: bytes.prefix(65))
            _ = try? PrivateKey(bytes: bytes.prefix(32))
            _ = try? EthereumAddress(parsing: text)
            _ = try? ECIES.decrypt(Hex.encode(bytes), with: key)
            _ = try? CryptoJSAES.decrypt(text, passphrase: "x")
            _ = try? Keystore(json: bytes)
            _ = try? TypedData(jsonText: text)
            _ = try? RawEnvelope.parse(authorizationHeader: "Herald " + text)
        }
    }

    @Test func randomSignaturesRecoverOrThrow() {
        var rng = SplitMix64(seed: 0x5245_4356)
        var recovered = 0
        for _ in 0..<500 {
            var bytes = rng.bytes(65)
            bytes[32] &= 0x7f  // keep s low so that parsing succeeds and recovery itself is exercised
            bytes[64] = UInt8.random(in: 27...28, using: &rng)
            guard let signature = try? RecoverableSignature(bytes: bytes) else { continue }
            if (try? signature.recoverPublicKey(digest: rng.bytes(32))) != nil { recovered += 1 }
        }
        #expect(recovered > 100)
    }

    @Test func mutatedValidInputsOnlyThrow() throws {
        var rng = SplitMix64(seed: 0x4d55_5441)
        let key = PrivateKey.generate()
        let keystore = Array(
            try Keystore(encrypting: key, passphrase: "p", kdf: .pbkdf2(c: 1, dklen: 32, salt: [1, 2, 3])).jsonText.utf8
        )
        let verifier = OperationVerifier(audience: "a")
        let binding = DeviceBinding(
            action: .register, wallet: key.address, platform: .android, deviceToken: String(repeating: "a", count: 40),
            audience: "a", nonce: UInt256(1), issuedAt: UInt256(100), expiresAt: UInt256(200))
        let envelope = Array(try binding.signed(with: key, scheme: .eip712, domain: verifier.domain).jsonText.utf8)
        let ecies = Array(try ECIES.encrypt(text: "secret", to: key.publicKey).utf8)
        var validEnvelopes = 0
        for _ in 0..<Self.iterations {
            for original in [keystore, envelope, ecies] {
                var mutated = original
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let position = Int.random(in: 0..<mutated.count, using: &rng)
                    switch Int.random(in: 0...2, using: &rng) {
                    case 0: mutated[position] = UInt8.random(in: 0...255, using: &rng)
                    case 1: mutated.remove(at: position)
                    default: mutated.insert(UInt8.random(in: 0...255, using: &rng), at: position)
                    }
                    if mutated.isEmpty { mutated = [0] }
                }
                _ = try? Keystore(json: mutated).decrypt(passphrase: "p")
                if verifier.verify(json: mutated, as: DeviceBinding.self, now: 150).verified != nil {
                    validEnvelopes += 1
                }
                _ = try? ECIES.decrypt(String(decoding: mutated, as: UTF8.self), with: key)
            }
        }
        // A mutation may land in insignificant whitespace-free spots only rarely; nearly all must be refused.
        #expect(validEnvelopes < Self.iterations / 10)
    }

    @Test func deepNestingIsRefusedNotAStackOverflow() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: HeraldError.invalidJSON) { try JSONParser.parse(deep) }
    }
}

@Suite struct JSONParserTests {
    @Test func keepsOrderAndExactNumbers() throws {
        let value = try JSONParser.parse(
            #"{"b":115792089237316195423570985008687907853269984665640564039457584007913129639935,"a":[true,null,"\u00e9\ud83d\ude00"]}"#
        )
        #expect(value.objectMembers?.map(\.key) == ["b", "a"])
        #expect(value["b"] == .number("115792089237316195423570985008687907853269984665640564039457584007913129639935"))
        #expect(value["a"] == .array([.bool(true), .null, .string("é😀")]))
        #expect(try JSONParser.parse(value.jsonText) == value)
    }

    @Test(arguments: [
        #"{"a":1,"a":2}"#, "[1,]", "01", "1.", "-", "\"\\ud800\"", "\"\u{01}\"", "{\"a\" 1}", "tru", "[1] x", "",
    ])
    func refusesWhatRFC8259Refuses(_ text: String) {
        #expect(throws: HeraldError.invalidJSON) { try JSONParser.parse(text) }
    }

    /// Escaped strings: runs and escapes in order, multi-byte text kept, surrogate pairs joined, and broken
    /// UTF-8 beside an escape still refused.
    @Test func escapedStringsKeepEveryRunAndEscape() throws {
        let text = #"["a\"é\n\u00e9\ud83d\ude00z\\", "\"\"\""]"#
        #expect(try JSONParser.parse(Array(text.utf8)) == .array([.string("a\"é\né😀z\\"), .string("\"\"\"")]))
        // A lead byte cut short by an escape, and a stray continuation byte after one.
        #expect(throws: HeraldError.invalidJSON) { try JSONParser.parse([0x22, 0xC3, 0x5C, 0x6E, 0x22]) }
        #expect(throws: HeraldError.invalidJSON) { try JSONParser.parse([0x22, 0x5C, 0x6E, 0xA9, 0x22]) }
        // Long and escape-dense (a type 4's payload text): parsed whole.
        let long = String(repeating: #"\"0x52908400098527886E0F7030069857D2E4169EE7\","#, count: 1000)
        #expect(try JSONParser.parse(Array(#""\#(long)""#.utf8)).stringValue?.utf8.count == 45_000)
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: HeraldError.invalidJSON) { try JSONParser.parse([0x22, 0xff, 0x22]) }
    }
}

@Suite struct JSONDuplicateKeyTests {
    @Test func duplicatesAreFoundInSmallAndLargeObjects() throws {
        let small = "{" + (0..<5).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"k2\":9}"
        #expect(throws: HeraldError.invalidJSON) { try JSONParser.parse(small) }
        let large = "{" + (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"k3\":9}"
        #expect(throws: HeraldError.invalidJSON) { try JSONParser.parse(large) }
        let unique = "{" + (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        #expect(try JSONParser.parse(unique).objectMembers?.count == 40)
    }
}
