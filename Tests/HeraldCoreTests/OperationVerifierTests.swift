import HeraldCore
import HeraldTesting
import Testing

@Suite struct OperationVerifierTests {
    static let key = try! PrivateKey(hex: "0x107be946709e41b7895eea9f2dacf998a0a9124acbb786f0fd1a826101581a07")
    static let other = try! PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
    static let audience = "https://push.example.org"
    static let now: Int64 = 1_763_769_700
    static let token = String(repeating: "6b1f", count: 16)
    let verifier = OperationVerifier(audience: audience, chainId: UInt256(1))

    static func binding(
        wallet: EthereumAddress = key.address, token: String = token, audience: String = audience, nonce: UInt64 = 42,
        issuedAt: UInt64 = 1_763_769_600, expiresAt: UInt64 = 1_763_769_900
    ) -> DeviceBinding {
        DeviceBinding(
            action: .register, wallet: wallet, platform: .ios, deviceToken: token, audience: audience,
            nonce: UInt256(nonce), issuedAt: UInt256(issuedAt), expiresAt: UInt256(expiresAt))
    }

    func code(_ text: String) -> APIErrorCode? {
        verifier.verify(json: Array(text.utf8), as: DeviceBinding.self, now: Self.now).rejection?.code
    }

    func code(_ envelope: SignedEnvelope<DeviceBinding>, now: Int64 = now) -> APIErrorCode? {
        verifier.verify(json: Array(envelope.jsonText.utf8), as: DeviceBinding.self, now: now).rejection?.code
    }

    @Test(arguments: SignatureScheme.allCases)
    func aWellSignedBindingVerifiesUnderBothSchemes(_ scheme: SignatureScheme) throws {
        let envelope = try Self.binding().signed(with: Self.key, scheme: scheme, domain: verifier.domain)
        let verified = try #require(
            verifier.verify(json: Array(envelope.jsonText.utf8), as: DeviceBinding.self, now: Self.now).verified)
        #expect(verified.signer == Self.key.address)
        #expect(verified.publicKey == Self.key.publicKey)
        #expect(verified.operation == Self.binding())
    }

    @Test func theVectorSignatureVerifiesThroughTheEnvelope() throws {
        let item = try #require(try Vectors.cases("eip712").first { $0["name"]?.stringValue == "deviceBinding" })
        let message = EIP712Tests.withNumbersAsStrings(
            try #require(item["typedData"]?["message"]), except: ["issuedAt", "expiresAt"])
        let envelope = JSONValue.object([
            ("scheme", .string("eip712")), ("message", message), ("signature", .string(try item.string("signature"))),
        ])
        #expect(code(envelope.jsonText) == nil)
    }

    @Test func theStaticOneCallFormAgrees() throws {
        let envelope = try Self.binding().signed(with: Self.key, scheme: .eip712, domain: verifier.domain)
        let result = OperationVerifier.verify(
            envelope.raw, as: DeviceBinding.self, now: Self.now, audience: Self.audience, chainId: UInt256(1))
        #expect(result.verified?.signer == Self.key.address)
    }

    @Test func eip191TextMatchesTheProtocolExample() throws {
        let wallet = try EthereumAddress(parsing: "eip155:1:0x3f243fdace01cfd9719f7359c94ba11361f32471")
        let text = try Self.binding(wallet: wallet).eip191Text(chainId: UInt256(1))
        #expect(
            text == """
                Herald DeviceBinding
                action: register
                wallet: 0x3f243FdacE01Cfd9719f7359c94BA11361f32471
                platform: ios
                deviceToken: \(Self.token)
                audience: https://push.example.org
                nonce: 42
                issuedAt: 1763769600
                expiresAt: 1763769900
                chainId: 1
                """)
    }

    @Test func timeRulesGiveTheirCodes() throws {
        func check(_ issued: UInt64, _ expires: UInt64, now: Int64 = Self.now) throws -> APIErrorCode? {
            code(
                try Self.binding(issuedAt: issued, expiresAt: expires).signed(
                    with: Self.key, scheme: .eip712, domain: verifier.domain), now: now)
        }
        #expect(try check(1_763_769_900, 1_763_769_900) == .badRequest)
        #expect(try check(1_763_769_761, 1_763_769_900) == .notYetValid)
        #expect(try check(1_763_769_760, 1_763_769_900) == nil)
        #expect(try check(1_763_769_600, 1_763_769_700) == .expired)
        #expect(try check(1_763_769_600, 1_763_770_201) == .validityTooLong)
        #expect(try check(1_763_769_600, 1_763_770_200) == nil)
    }

    @Test func otherAudienceChainOrSignerAreRefused() throws {
        let wrongAudience = try Self.binding(audience: "https://evil.example").signed(
            with: Self.key, scheme: .eip712, domain: verifier.domain)
        #expect(code(wrongAudience) == .wrongAudience)
        let otherChain = try Self.binding().signed(with: Self.key, scheme: .eip712, domain: HeraldDomain(chainId: 5))
        #expect(code(otherChain) == .signatureMismatch)
        let otherChain191 = try Self.binding().signed(with: Self.key, scheme: .eip191, domain: HeraldDomain(chainId: 5))
        #expect(code(otherChain191) == .signatureMismatch)
        let otherSigner = try Self.binding().signed(with: Self.other, scheme: .eip712, domain: verifier.domain)
        #expect(code(otherSigner) == .signatureMismatch)
        var swappedScheme = try Self.binding().signed(with: Self.key, scheme: .eip712, domain: verifier.domain)
        swappedScheme.scheme = .eip191
        #expect(code(swappedScheme) == .signatureMismatch)
    }

    @Test func malformedSignaturesAreBadSignature() throws {
        let envelope = try Self.binding().signed(with: Self.key, scheme: .eip712, domain: verifier.domain)
        let message = envelope.operation.messageJSON.jsonText
        let sig = envelope.signature
        let highS = HighSSignature.twin(of: sig)
        for bad in ["", "0x", "0x1234", "nothex", Hex.encode(sig.compact + [29], prefix: true), highS] {
            #expect(
                code(#"{"scheme":"eip712","message":\#(message),"signature":"\#(bad)"}"#) == .badSignature,
                "\(bad.prefix(12))")
        }
        #expect(code(#"{"scheme":"eip712","message":\#(message),"signature":42}"#) == .badRequest)
        #expect(
            code(
                #"{"scheme":"eip712","message":\#(message),"signature":"\#(Hex.encode(sig.compact + [sig.recoveryId]))"}"#
            ) == nil)
    }

    @Test func messageShapeErrorsAreBadRequest() throws {
        let good = try Self.binding().signed(with: Self.key, scheme: .eip712, domain: verifier.domain)
        var members = try #require(good.operation.messageJSON.objectMembers)
        func envelope(_ message: String) -> String {
            #"{"scheme":"eip712","message":\#(message),"signature":"\#(good.signature.hex)"}"#
        }
        let full = good.operation.messageJSON.jsonText
        #expect(code(envelope(String(full.dropLast()) + #","extra":"x"}"#)) == .badRequest)
        #expect(code(envelope(String(full.dropLast()) + #","nonce":"42"}"#)) == .badRequest)
        members.removeAll { $0.key == "nonce" }
        #expect(code(envelope(JSONValue.object(members).jsonText)) == .badRequest)
        #expect(code(envelope(full.replacingOccurrences(of: #""nonce":"42""#, with: #""nonce":42"#))) == .badRequest)
        #expect(code(envelope(full.replacingOccurrences(of: #""nonce":"42""#, with: #""nonce":"042""#))) == .badRequest)
        #expect(code(envelope(full.replacingOccurrences(of: #""nonce":"42""#, with: #""nonce":"-1""#))) == .badRequest)
        let tooBig = "1" + String(repeating: "0", count: 78)
        #expect(
            code(envelope(full.replacingOccurrences(of: #""nonce":"42""#, with: #""nonce":"\#(tooBig)""#)))
                == .badRequest)
        #expect(
            code(envelope(full.replacingOccurrences(of: #""action":"register""#, with: #""action":"bind""#)))
                == .badRequest)
        #expect(code(#"{"scheme":"eip999","message":\#(full),"signature":"\#(good.signature.hex)"}"#) == .badRequest)
        #expect(code(#"{"scheme":"eip712","message":[],"signature":"\#(good.signature.hex)"}"#) == .badRequest)
        #expect(code("not json") == .badRequest)
        #expect(
            code(#"{"scheme":"eip712","scheme":"eip712","message":\#(full),"signature":"\#(good.signature.hex)"}"#)
                == .badRequest)
    }

    @Test func integerTimesAreAcceptedAndVerify() throws {
        let good = try Self.binding().signed(with: Self.key, scheme: .eip712, domain: verifier.domain)
        let text = good.jsonText
            .replacingOccurrences(of: #""issuedAt":"1763769600""#, with: #""issuedAt":1763769600"#)
            .replacingOccurrences(of: #""expiresAt":"1763769900""#, with: #""expiresAt":1763769900"#)
        #expect(text != good.jsonText)
        #expect(code(text) == nil)
    }

    @Test func fieldErrorsGiveTheirCodes() throws {
        let good = try Self.binding().signed(with: Self.key, scheme: .eip712, domain: verifier.domain).jsonText
        #expect(
            code(
                good.replacingOccurrences(
                    of: "0x3f243FdacE01Cfd9719f7359c94BA11361f32471", with: "0x3f243FdacE01Cfd9719f7359c94BA11361f32470"
                )) == .invalidWallet)
        #expect(
            code(good.replacingOccurrences(of: #""platform":"ios""#, with: #""platform":"windows""#))
                == .invalidPlatform)
        #expect(code(good.replacingOccurrences(of: Self.token, with: "abc")) == .invalidDeviceToken)
        #expect(code(good.replacingOccurrences(of: Self.token, with: Self.token + "6")) == .invalidDeviceToken)
    }

    @Test func caipWalletFormsVerifyAsTheSameSigner() throws {
        let good = try Self.binding().signed(with: Self.key, scheme: .eip191, domain: verifier.domain).jsonText
        let caip = good.replacingOccurrences(
            of: "0x3f243FdacE01Cfd9719f7359c94BA11361f32471",
            with: "eip155:1:0x3f243fdace01cfd9719f7359c94ba11361f32471")
        #expect(caip != good)
        #expect(code(caip) == nil)
    }

    @Test func eip191RefusesLineBreaksInStrings() throws {
        let op = Self.binding(audience: "https://push.example.org\nwallet: 0xabc")
        let verifier = OperationVerifier(audience: op.audience)
        #expect(throws: OperationRejection.self) {
            try op.signed(with: Self.key, scheme: .eip191, domain: verifier.domain)
        }
        let envelope = try op.signed(with: Self.key, scheme: .eip712, domain: verifier.domain)
        let as191 = envelope.jsonText.replacingOccurrences(of: #""scheme":"eip712""#, with: #""scheme":"eip191""#)
        #expect(
            verifier.verify(json: Array(as191.utf8), as: DeviceBinding.self, now: Self.now).rejection?.code
                == .badRequest)
        #expect(
            verifier.verify(json: Array(envelope.jsonText.utf8), as: DeviceBinding.self, now: Self.now).verified != nil)
    }

    @Test func otherOperationsCheckTheirOwnSigner() throws {
        let subscription = Subscription(
            action: .subscribe, channel: Self.other.address, subscriber: Self.key.address, audience: Self.audience,
            nonce: UInt256(7), issuedAt: UInt256(1_763_769_600), expiresAt: UInt256(1_763_769_800))
        let bySubscriber = try subscription.signed(with: Self.key, scheme: .eip712, domain: verifier.domain)
        #expect(verifier.verify(bySubscriber, now: Self.now).verified != nil)
        let byChannel = try subscription.signed(with: Self.other, scheme: .eip712, domain: verifier.domain)
        #expect(verifier.verify(byChannel, now: Self.now).rejection?.code == .signatureMismatch)

        let access = FeedAccess(
            wallet: Self.key.address, audience: Self.audience, issuedAt: UInt256(1_763_769_600),
            expiresAt: UInt256(1_763_769_800))
        let header = try access.signed(with: Self.key, scheme: .eip191, domain: verifier.domain).authorizationHeader
        let raw = try RawEnvelope.parse(authorizationHeader: header)
        #expect(verifier.verify(raw, as: FeedAccess.self, now: Self.now).verified?.signer == Self.key.address)
        #expect(throws: OperationRejection.self) { try RawEnvelope.parse(authorizationHeader: "Bearer x") }

        let notification = NotificationOperation(
            channel: Self.other.address, payload: #"{"notification":{"title":"a","body":"b"},"data":{"type":"1"}}"#,
            audience: Self.audience, nonce: UInt256(1), issuedAt: UInt256(1_763_769_600),
            expiresAt: UInt256(1_763_769_800))
        #expect(
            verifier.verify(
                try notification.signed(with: Self.other, scheme: .eip712, domain: verifier.domain), now: Self.now
            ).verified != nil)
        #expect(
            verifier.verify(
                try notification.signed(with: Self.other, scheme: .eip191, domain: verifier.domain), now: Self.now
            ).verified != nil)
    }
}
