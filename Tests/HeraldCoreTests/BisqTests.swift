import Foundation
import HeraldCore
import Testing

@Suite struct BisqTests {
    @Test func everyVectorMessageDecryptsToItsPlaintextAndReencryptsIdentically() throws {
        let cases = try Vectors.cases("bisq", "messages")
        #expect(cases.count == 7)
        for item in cases {
            let key = try item.string("key")
            let envelope = try item.string("message")
            let expected = try BisqMessage(json: JSONParser.parse(try item.string("plaintext_json")))
            let message = try BisqMessageCipher.decrypt(envelope, key: key)
            #expect(message == expected)
            #expect(message.jsonValue.jsonText == (try item.string("plaintext_json")))
            let platform: Platform = envelope.hasPrefix("BisqMessageiOS|") ? .ios : .android
            let again = try BisqMessageCipher.encrypt(message, key: key, platform: platform, iv: try item.string("iv"))
            #expect(again == envelope)
            let ciphertext = try #require(Data(base64Encoded: String(envelope.split(separator: "|")[2])))
            #expect(String(ciphertext.count) == item["padded_plaintext_length"].map { $0.jsonText })
        }
    }

    @Test func everyValidPairingTokenParsesToItsFields() throws {
        guard case .array(let valid)? = try Vectors.load("bisq")["pairing"]?["valid"] else {
            Issue.record("no valid pairing tokens")
            return
        }
        #expect(valid.count == 3)
        for item in valid {
            let parsed = try BisqPairingToken(parsing: try item.string("token"))
            #expect(parsed.platform.rawValue == (try item.string("platform")))
            #expect(parsed.descriptor == (try item.string("descriptor")))
            #expect(parsed.key == (try item.string("key")))
            #expect(parsed.deviceToken == (try item.string("deviceToken")))
        }
    }

    @Test func everyInvalidPairingTokenIsRefusedWithAReason() throws {
        guard case .array(let invalid)? = try Vectors.load("bisq")["pairing"]?["invalid"] else {
            Issue.record("no invalid pairing tokens")
            return
        }
        #expect(invalid.count == 8)
        var reasons: Set<String> = []
        for item in invalid {
            let token = try item.string("token")
            let parsed = Result { () throws(HeraldError) in try BisqPairingToken(parsing: token) }
            guard case .failure(let error) = parsed else {
                Issue.record("accepted: \(try item.string("why"))")
                continue
            }
            #expect(error == .invalidBisqPairing)
            #expect(!error.reason.contains("029d9cb9d9124b42bdf263ed4521169d"), "a reason never quotes the key")
            reasons.insert(error.reason)
        }
        #expect(reasons.count >= 6, "refusals say what is wrong, not one generic line")
    }

    @Test func aRandomIVRoundTripsAndPadsUTF8BytesWithSpaces() throws {
        let key = "0123456789abcdef0123456789ABCDEF"
        let message = BisqMessage(
            sentDate: 1_763_769_600_123, txId: "t", title: "Ünïcödé ✓", message: "\"quoted\"\n🚀", type: .offer)
        let first = try BisqMessageCipher.encrypt(message, key: key, platform: .android)
        let second = try BisqMessageCipher.encrypt(message, key: key, platform: .android)
        #expect(first != second)
        #expect(first.hasPrefix("BisqMessageAndroid|"))
        #expect(try BisqMessageCipher.decrypt(first, key: key) == message)
    }

    @Test func aWrongKeyOrDamagedEnvelopeIsRefused() throws {
        let key = "0123456789abcdef0123456789ABCDEF"
        let envelope = try BisqMessageCipher.encrypt(
            BisqMessage(sentDate: 1, title: "t", type: .trade), key: key, platform: .ios)
        #expect(throws: HeraldError.decryptionFailed) {
            try BisqMessageCipher.decrypt(envelope, key: "1123456789abcdef0123456789ABCDEF")
        }
        #expect(throws: HeraldError.invalidBisqMessage) { try BisqMessageCipher.decrypt(envelope, key: "short") }
        #expect(throws: HeraldError.invalidBisqMessage) {
            try BisqMessageCipher.decrypt("BisqMessageiOS|x|y", key: key)
        }
        #expect(throws: HeraldError.invalidBisqMessage) {
            try BisqMessageCipher.decrypt("BisqMessageiOS|0123456789abcdef|AAAA", key: key)
        }
        #expect(throws: HeraldError.invalidBisqMessage) {
            try BisqMessageCipher.decrypt(envelope.replacingOccurrences(of: "BisqMessageiOS", with: "Other"), key: key)
        }
    }

    @Test func thePseudoWalletIsTheFirst16HexOfTheKeysSHA256() {
        // printf %s 029d9cb9d9124b42bdf263ed4521169d | sha256sum
        #expect(BisqKey.pseudoWallet(forKey: "029d9cb9d9124b42bdf263ed4521169d") == "bisq:7caf2f2467386081")
    }

    @Test func theJSONSchemaNamesTheMessageMembersInOrderAndEveryType() throws {
        let (names, required) = try SchemaTests.properties("BisqMessage")
        let members = try #require(BisqMessage(sentDate: 1, type: .trade).jsonValue.objectMembers).map(\.key)
        #expect(names == members && required == members)
        let schema = try JSONParser.parse(
            Array(try Data(contentsOf: SchemaTests.folder.appendingPathComponent("BisqMessage.json"))))
        guard case .array(let kinds)? = schema["properties"]?["type"]?["enum"] else {
            Issue.record("BisqMessage.json has no type enum")
            return
        }
        #expect(kinds.compactMap(\.stringValue) == BisqMessage.Kind.allCases.map(\.rawValue))
    }
}
