import HeraldCore
import Testing

@Suite struct ECIESTests {
    @Test func everyCaseDecryptsAndDeterministicOnesReencryptIdentically() throws {
        let cases = try Vectors.cases("ecies")
        #expect(cases.count == 6)
        var reencrypted = 0
        for item in cases {
            let key = try PrivateKey(hex: try item.string("privateKey"))
            let ciphertext = try item.string("ciphertext")
            let plaintext = try item.string("plaintext")
            #expect(try ECIES.decryptText(ciphertext, with: key) == plaintext, "\(item["note"]?.stringValue ?? "")")
            if let ephemeral = item["ephemeralPrivateKey"]?.stringValue, let iv = item["iv"]?.stringValue {
                let again = try ECIES.encrypt(
                    Array(plaintext.utf8), to: key.publicKey, ephemeralKey: try PrivateKey(hex: ephemeral),
                    iv: try Hex.decode(iv))
                // The unpadded-Px case was made by a buggy sender; Herald always pads, so it differs there only.
                if item["note"]?.stringValue?.contains("unpadded") == true {
                    #expect(again != ciphertext)
                    #expect(try ECIES.decryptText(again, with: key) == plaintext)
                } else {
                    #expect(again == ciphertext, "\(item["note"]?.stringValue ?? "")")
                    reencrypted += 1
                }
            }
        }
        #expect(reencrypted == 4)
    }

    @Test func mustFailCasesFailWithAClearError() throws {
        let cases = try Vectors.cases("ecies", "mustFail")
        #expect(cases.count == 2)
        for item in cases {
            let key = try PrivateKey(hex: try item.string("privateKey"))
            #expect(throws: HeraldError.self) { try ECIES.decrypt(try item.string("ciphertext"), with: key) }
        }
        let tampered = try #require(cases.first)
        let tamperedKey = try PrivateKey(hex: try tampered.string("privateKey"))
        let tamperedBlob = try tampered.string("ciphertext")
        do throws(HeraldError) {
            _ = try ECIES.decrypt(tamperedBlob, with: tamperedKey)
            Issue.record("a tampered MAC decrypted")
        } catch {
            #expect(error.code == .decryptionFailed)
            #expect(error.reason.contains("MAC"))
        }
    }

    @Test func randomSecretsRoundTripAndOnlyTheRecipientReads() throws {
        let recipient = PrivateKey.generate()
        let stranger = PrivateKey.generate()
        for _ in 0..<20 {
            let secret = SecureRandom.alphanumericString()
            #expect(secret.count == 15 && secret.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
            let blob = try ECIES.encrypt(text: secret, to: recipient.publicKey)
            #expect(try ECIES.decryptText(blob, with: recipient) == secret)
            #expect(throws: HeraldError.decryptionFailed) { try ECIES.decrypt(blob, with: stranger) }
        }
    }

    @Test func malformedBlobsAreMalformedNotCrashes() throws {
        let key = PrivateKey.generate()
        let good = try ECIES.encrypt(text: "x", to: key.publicKey)
        for bad in ["", "zz", String(good.dropLast(2)), String(good.prefix(32)) + "04" + String(good.dropFirst(34))] {
            #expect(throws: HeraldError.self) { try ECIES.decrypt(bad, with: key) }
        }
    }
}
