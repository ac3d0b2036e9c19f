import HeraldCore
import Testing

@Suite struct NotificationPayloadTests {
    static let alice = "0x3f243FdacE01Cfd9719f7359c94BA11361f32471"
    static let bob = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"

    func code(_ text: String) -> APIErrorCode? {
        do {
            _ = try NotificationPayload.parse(text)
            return nil
        } catch {
            return error.code
        }
    }

    static func payload(
        type: String, recipients: String?, data: String = "", title: String = "Hi", body: String = "there"
    ) -> String {
        let extra = data.isEmpty ? "" : "," + data
        let tail = recipients.map { ",\"recipients\":\($0)" } ?? ""
        return #"{"notification":{"title":"\#(title)","body":"\#(body)"},"data":{"type":"\#(type)"\#(extra)}\#(tail)}"#
    }

    @Test func everyTypeParsesWithItsRecipientForm() throws {
        let broadcast = try NotificationPayload.parse(
            Self.payload(type: "1", recipients: nil, data: #""amsg":"hello""#))
        #expect(broadcast.kind == .broadcast && broadcast.recipients.isEmpty && broadcast.message == "hello")
        #expect(broadcast.subject == "" && broadcast.callToAction == "" && broadcast.image == "")
        let targeted = try NotificationPayload.parse(
            Self.payload(type: "3", recipients: "\"eip155:1:\(Self.alice.lowercased())\""))
        #expect(targeted.recipients.map(\.wallet.checksummed) == [Self.alice])
        let subset = try NotificationPayload.parse(
            Self.payload(type: "4", recipients: "{\"\(Self.alice)\":null,\"\(Self.bob)\":null}"))
        #expect(subset.recipients.count == 2)
        let key = PrivateKey.generate()
        let secret = try ECIES.encrypt(text: "k3Y9s0mEs3cr3tZ", to: key.publicKey)
        let encrypted = try CryptoJSAES.encrypt("trade accepted", passphrase: "k3Y9s0mEs3cr3tZ")
        let type2 = try NotificationPayload.parse(
            Self.payload(
                type: "2", recipients: "{\"\(Self.alice)\":{\"secret\":\"\(secret)\"}}",
                data: "\"amsg\":\"\(encrypted)\""))
        #expect(type2.kind == .secret)
        #expect(type2.recipients.first?.secret == secret)
        #expect(
            try CryptoJSAES.decrypt(type2.message, passphrase: ECIES.decryptText(secret, with: key)) == "trade accepted"
        )
    }

    @Test func structureFaultsAreInvalidPayload() {
        #expect(code("not json") == .invalidPayload)
        #expect(code(#"{"data":{"type":"1"}}"#) == .invalidPayload)
        #expect(code(Self.payload(type: "5", recipients: nil)) == .invalidPayload)
        #expect(code(#"{"notification":{"title":"a","body":"b"},"data":{"type":1}}"#) == .invalidPayload)
        #expect(code(#"{"notification":{"title":"a"},"data":{"type":"1"}}"#) == .invalidPayload)
        #expect(code(Self.payload(type: "1", recipients: "\"\(Self.alice)\"")) == .invalidPayload)
        #expect(code(Self.payload(type: "3", recipients: nil)) == .invalidPayload)
        #expect(code(Self.payload(type: "3", recipients: "{\"\(Self.alice)\":null}")) == .invalidPayload)
        #expect(code(Self.payload(type: "4", recipients: "{}")) == .invalidPayload)
        #expect(code(Self.payload(type: "4", recipients: "{\"\(Self.alice)\":1}")) == .invalidPayload)
        #expect(
            code(Self.payload(type: "4", recipients: "{\"\(Self.alice)\":null,\"\(Self.alice.lowercased())\":null}"))
                == .invalidPayload)
        #expect(
            code(Self.payload(type: "2", recipients: "{\"\(Self.alice)\":{\"secret\":\"abc\"}}")) == .invalidPayload)
        #expect(code(Self.payload(type: "1", recipients: nil, data: #""amsg":5"#)) == .invalidPayload)
        // U+0000, which JSON can spell and PostgreSQL text cannot store, in any text field.
        #expect(code(#"{"notification":{"title":"a\u0000b","body":"b"},"data":{"type":"1"}}"#) == .invalidPayload)
        #expect(code(Self.payload(type: "1", recipients: nil, data: #""amsg":"x\u0000""#)) == .invalidPayload)
        let many = (0...1000).map { "\"0x" + String(format: "%040x", $0 + 1) + "\":null" }.joined(separator: ",")
        #expect(code(Self.payload(type: "4", recipients: "{\(many)}")) == .invalidPayload)
    }

    @Test func badRecipientsAreInvalidWallet() {
        #expect(code(Self.payload(type: "3", recipients: "\"0x1234\"")) == .invalidWallet)
        #expect(code(Self.payload(type: "4", recipients: "{\"bob\":null}")) == .invalidWallet)
    }

    @Test func limitsCountScalarsAndWidenForEncryptedFields() throws {
        let eighty = String(repeating: "é", count: 80)
        #expect(code(Self.payload(type: "1", recipients: nil, title: eighty)) == nil)
        #expect(code(Self.payload(type: "1", recipients: nil, title: eighty + "x")) == .fieldTooLong)
        #expect(
            code(Self.payload(type: "1", recipients: nil, body: String(repeating: "b", count: 257))) == .fieldTooLong)
        #expect(
            code(Self.payload(type: "1", recipients: nil, data: "\"amsg\":\"\(String(repeating: "m", count: 2049))\""))
                == .fieldTooLong)
        #expect(
            code(Self.payload(type: "1", recipients: nil, data: "\"acta\":\"\(String(repeating: "u", count: 256))\""))
                == .fieldTooLong)
        // Type 2: the encrypted form of an 80-character subject fits, anything longer than its bound does not.
        let key = PrivateKey.generate()
        let secret = try ECIES.encrypt(text: "s", to: key.publicKey)
        let recipients = "{\"\(Self.alice)\":{\"secret\":\"\(secret)\"}}"
        let subject = try CryptoJSAES.encrypt(String(repeating: "✓", count: 80), passphrase: "s")
        #expect(subject.count <= NotificationPayload.Limit.encrypted(80))
        #expect(code(Self.payload(type: "2", recipients: recipients, data: "\"asub\":\"\(subject)\"")) == nil)
        let tooLong = String(repeating: "A", count: NotificationPayload.Limit.encrypted(80) + 4)
        #expect(code(Self.payload(type: "2", recipients: recipients, data: "\"asub\":\"\(tooLong)\"")) == .fieldTooLong)
        #expect(code(String(repeating: " ", count: 448 * 1024 + 1)) == .fieldTooLong)
    }

    @Test func draftsComposeEveryTypeTheParserAccepts() throws {
        let alice = try PrivateKey(hex: "0x" + String(repeating: "11", count: 32))
        let bob = try PrivateKey(hex: "0x" + String(repeating: "22", count: 32))
        let draft = NotificationDraft(title: "Paid", body: "0.1 ETH arrived", callToAction: "https://x.example")
        #expect(draft.subject == "Paid" && draft.message == "0.1 ETH arrived", "subject and message default")
        let broadcast = try NotificationPayload.parse(draft.broadcastPayload())
        #expect(broadcast.kind == .broadcast && broadcast.recipients.isEmpty)
        let one = try NotificationPayload.parse(draft.targetedPayload(to: [alice.address, alice.address]))
        #expect(one.kind == .targeted && one.recipients.map(\.wallet) == [alice.address])
        let two = try NotificationPayload.parse(draft.targetedPayload(to: [alice.address, bob.address]))
        #expect(two.kind == .subset && two.recipients.map(\.wallet) == [alice.address, bob.address])

        let secret = try NotificationPayload.parse(
            draft.secretPayload(to: [(alice.address, alice.publicKey), (bob.address, bob.publicKey)]))
        #expect(secret.kind == .secret && secret.recipients.count == 2)
        #expect(secret.message != draft.message && secret.title != draft.title, "no plaintext travels")
        for (key, recipient) in zip([alice, bob], secret.recipients) {
            let passphrase = try ECIES.decryptText(try #require(recipient.secret), with: key)
            #expect(passphrase.count == 15 && passphrase.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
            #expect(try CryptoJSAES.decrypt(secret.message, passphrase: passphrase) == draft.message)
            #expect(try CryptoJSAES.decrypt(secret.callToAction, passphrase: passphrase) == draft.callToAction)
        }
        #expect(secret.image.isEmpty, "empty fields stay empty")
        #expect(throws: HeraldError.invalidPublicKey) {
            try draft.secretPayload(to: [(alice.address, bob.publicKey)])
        }
    }
}
