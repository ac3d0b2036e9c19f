import HeraldCore
import Testing

@Suite struct KeystoreTests {
    @Test func everyCaseDecryptsToItsKey() throws {
        let cases = try Vectors.cases("keystore-v3")
        #expect(cases.count == 4)
        for item in cases {
            let keystore = try Keystore(json: try #require(item["keystore"]))
            let key = try keystore.decrypt(passphrase: try item.string("password"))
            #expect(
                Hex.encode(key.rawBytes, prefix: true) == (try item.string("privateKey")),
                "\(item["note"]?.stringValue ?? "")")
            if let address = item["address"]?.stringValue { #expect(key.address.checksummed == address) }
        }
    }

    @Test func mustFailCasesGiveTheirDistinctErrors() throws {
        let expected: [String: HeraldError] = [
            "wrongPassphrase": .wrongPassphrase, "kdfParametersTooLarge": .kdfParametersTooLarge,
            "malformed": .malformedKeystore,
        ]
        let cases = try Vectors.cases("keystore-v3", "mustFail")
        #expect(cases.count == 3)
        for item in cases {
            let error = try #require(expected[try item.string("error")])
            #expect(throws: error) {
                try Keystore(json: try #require(item["keystore"])).decrypt(passphrase: try item.string("password"))
            }
        }
    }

    @Test func aWrittenLightKeystoreReadsBackAndKeepsItsName() throws {
        let key = PrivateKey.generate()
        let written = try Keystore(encrypting: key, passphrase: "pässwörd ✓", kdf: .lightScrypt(), name: "trading")
        let read = try Keystore(json: Array(written.jsonText.utf8))
        #expect(read == written)
        #expect(read.name == "trading")
        #expect(try read.decrypt(passphrase: "pässwörd ✓").address == key.address)
        #expect(throws: HeraldError.wrongPassphrase) { try read.decrypt(passphrase: "passwörd ✓") }
        guard case .scrypt(let n, let r, let p, let dklen, let salt) = read.kdf else {
            Issue.record("expected scrypt")
            return
        }
        #expect((n, r, p, dklen, salt.count) == (4096, 8, 6, 32, 32))
    }

    @Test func anEmptyPassphraseWorksForScryptAndPbkdf2() throws {
        let key = PrivateKey.generate()
        let scrypt = try Keystore(encrypting: key, passphrase: "", kdf: .lightScrypt())
        #expect(try scrypt.decrypt(passphrase: "").address == key.address)
        let pbkdf2 = try Keystore(
            encrypting: key, passphrase: "", kdf: .pbkdf2(c: 1000, dklen: 32, salt: SecureRandom.bytes(16)))
        #expect(try pbkdf2.decrypt(passphrase: "").address == key.address)
    }

    @Test(arguments: [
        (#""n": 4096, "r": 33, "p": 1"#, HeraldError.kdfParametersTooLarge),
        (#""n": 4096, "r": 8, "p": 17"#, HeraldError.kdfParametersTooLarge),
        (#""n": 2097152, "r": 8, "p": 1"#, HeraldError.kdfParametersTooLarge),
        (#""n": 1048576, "r": 8, "p": 2"#, HeraldError.kdfParametersTooLarge),
        (#""n": 99999999999999999999999, "r": 8, "p": 1"#, HeraldError.kdfParametersTooLarge),
        (#""n": 4095, "r": 8, "p": 1"#, HeraldError.malformedKeystore),
        (#""n": 4096, "r": 0, "p": 1"#, HeraldError.malformedKeystore),
        (#""n": "4096", "r": 8, "p": 1"#, HeraldError.malformedKeystore),
        (#""n": 4096.5, "r": 8, "p": 1"#, HeraldError.malformedKeystore),
    ])
    func scryptParametersAreCheckedBeforeAnyWork(_ params: String, _ error: HeraldError) {
        let json = """
            {"crypto":{"cipher":"aes-128-ctr","cipherparams":{"iv":"277d5f9864eb7d4c4ec5d9d98c5e88ba"},
            "ciphertext":"057937858fc2310bae660bc38bf0835ea68a1d4072e19a685a35783ad43a7ff3","kdf":"scrypt",
            "kdfparams":{"dklen":32,\(params),"salt":"81ae6c52c73fc4a630f08c6fc7547759"},
            "mac":"8386ab28412c23ada245037a77c29e668a716e812c0b7052b2ec49b8743d7caa"},"id":"x","version":3}
            """
        #expect(throws: error) { try Keystore(json: Array(json.utf8)) }
    }

    @Test func pbkdf2IterationCapAndUnsupportedFormsAreRefused() throws {
        func keystore(kdf: String, params: String, cipher: String = "aes-128-ctr", version: String = "3") -> String {
            """
            {"crypto":{"cipher":"\(cipher)","cipherparams":{"iv":"277d5f9864eb7d4c4ec5d9d98c5e88ba"},
            "ciphertext":"057937858fc2310bae660bc38bf0835ea68a1d4072e19a685a35783ad43a7ff3","kdf":"\(kdf)",
            "kdfparams":{\(params)},"mac":"8386ab28412c23ada245037a77c29e668a716e812c0b7052b2ec49b8743d7caa"},"version":\(version)}
            """
        }
        let salt = #""salt":"81ae6c52c73fc4a630f08c6fc7547759""#
        #expect(throws: HeraldError.kdfParametersTooLarge) {
            try Keystore(
                json: Array(
                    keystore(kdf: "pbkdf2", params: #""c":10000001,"dklen":32,"prf":"hmac-sha256",\#(salt)"#).utf8))
        }
        #expect(throws: HeraldError.unsupportedKeystore) {
            try Keystore(
                json: Array(keystore(kdf: "pbkdf2", params: #""c":1,"dklen":32,"prf":"hmac-sha512",\#(salt)"#).utf8))
        }
        #expect(throws: HeraldError.unsupportedKeystore) {
            try Keystore(json: Array(keystore(kdf: "argon2", params: salt).utf8))
        }
        #expect(throws: HeraldError.unsupportedKeystore) {
            try Keystore(
                json: Array(
                    keystore(
                        kdf: "pbkdf2", params: #""c":1,"dklen":32,"prf":"hmac-sha256",\#(salt)"#, cipher: "aes-128-cbc"
                    ).utf8))
        }
        #expect(throws: HeraldError.unsupportedKeystore) {
            try Keystore(
                json: Array(
                    keystore(kdf: "pbkdf2", params: #""c":1,"dklen":32,"prf":"hmac-sha256",\#(salt)"#, version: "1")
                        .utf8))
        }
        #expect(throws: HeraldError.malformedKeystore) { try Keystore(json: Array("[]".utf8)) }
        #expect(throws: HeraldError.malformedKeystore) { try Keystore(json: Array("{".utf8)) }
    }

    @Test func aKeystoreWhoseAddressDisagreesWithItsKeyIsDamaged() throws {
        let key = PrivateKey.generate()
        var keystore = try Keystore(encrypting: key, passphrase: "p", kdf: .lightScrypt())
        keystore.address = PrivateKey.generate().address
        #expect(throws: HeraldError.malformedKeystore) { try keystore.decrypt(passphrase: "p") }
    }
}
