import HeraldCore
import Testing

@Suite struct CryptoJSAESTests {
    @Test func everyCaseDecryptsAndFixedSaltCasesReencryptIdentically() throws {
        let cases = try Vectors.cases("cryptojs-aes")
        #expect(cases.count == 6)
        for item in cases {
            let passphrase = try item.string("passphrase")
            let ciphertext = try item.string("ciphertext")
            let plaintext = try item.string("plaintext")
            #expect(try CryptoJSAES.decrypt(ciphertext, passphrase: passphrase) == plaintext)
            let salt =
                try item["salt"]?.stringValue.map { try Hex.decode($0) }
                ?? Array(try #require(Base64Bytes.decode(ciphertext))[8..<16])
            #expect(try CryptoJSAES.encrypt(plaintext, passphrase: passphrase, salt: salt) == ciphertext)
        }
    }

    @Test func roundTripsWithARandomSaltAndEmptyFields() throws {
        let secret = SecureRandom.alphanumericString()
        for text in ["", "a", "Your offer has been accepted — 0.5 BTC ✓", String(repeating: "z", count: 2048)] {
            let first = try CryptoJSAES.encrypt(text, passphrase: secret)
            let second = try CryptoJSAES.encrypt(text, passphrase: secret)
            #expect(first != second)
            #expect(try CryptoJSAES.decrypt(first, passphrase: secret) == text)
        }
    }

    @Test func wrongSecretOrDamageFails() throws {
        let blob = try CryptoJSAES.encrypt("register", passphrase: "PartialStringAS")
        #expect(throws: HeraldError.self) { try CryptoJSAES.decrypt(blob, passphrase: "PartialStringAT") }
        #expect(throws: HeraldError.malformedCiphertext) { try CryptoJSAES.decrypt("not base64!", passphrase: "x") }
        #expect(throws: HeraldError.malformedCiphertext) { try CryptoJSAES.decrypt("U2FsdGVkX18=", passphrase: "x") }
    }
}

/// Standard base64 decoding for the test's salt extraction.
enum Base64Bytes {
    static func decode(_ text: String) -> [UInt8]? {
        Base64URL.decode(text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"))
    }
}
