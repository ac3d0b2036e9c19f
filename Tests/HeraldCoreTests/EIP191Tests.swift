import HeraldCore
import Testing

@Suite struct EIP191Tests {
    @Test func everyVectorDigestSignatureAndSignerMatch() throws {
        let cases = try Vectors.cases("eip191")
        #expect(cases.count == 4)
        for item in cases {
            let text = try item.string("text")
            let key = try PrivateKey(hex: try item.string("privateKey"))
            #expect(Hex.encode(PersonalMessage.digest(text: text), prefix: true) == (try item.string("digest")))
            let signature = try PersonalMessage.sign(text: text, with: key)
            #expect(signature.hex == (try item.string("signature")))
            let published = try RecoverableSignature(hex: try item.string("signature"))
            #expect(
                try PersonalMessage.recoverSigner(of: text, signature: published).checksummed
                    == (try item.string("address")))
        }
    }
}
