import HeraldCore
import Testing

@Suite struct Secp256k1Tests {
    static let n = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"
    static let halfN = "7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0"
    static let halfNPlusOne = "7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a1"

    @Test func privateKeyRangeIsEnforced() throws {
        #expect(throws: HeraldError.invalidPrivateKey) { try PrivateKey(hex: String(repeating: "0", count: 64)) }
        #expect(throws: HeraldError.invalidPrivateKey) { try PrivateKey(hex: Self.n) }
        #expect(throws: HeraldError.invalidPrivateKey) { try PrivateKey(hex: "ff") }
        #expect(throws: HeraldError.invalidPrivateKey) { try PrivateKey(hex: "zz") }
        _ = try PrivateKey(hex: "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140")
        _ = try PrivateKey(hex: "0x" + String(repeating: "0", count: 63) + "1")
    }

    @Test func publicKeyParsesEveryFormAndSerialisesBoth() throws {
        let key = try PrivateKey(hex: "0x107be946709e41b7895eea9f2dacf998a0a9124acbb786f0fd1a826101581a07")
        let pub = key.publicKey
        #expect(pub.uncompressed.count == 65 && pub.uncompressed[0] == 4)
        #expect(pub.compressed.count == 33)
        #expect(try PublicKey(bytes: pub.compressed) == pub)
        #expect(try PublicKey(bytes: pub.uncompressed) == pub)
        #expect(try PublicKey(bytes: pub.uncompressed.dropFirst()) == pub)
        var offCurve = pub.uncompressed
        offCurve[64] ^= 1
        #expect(throws: HeraldError.invalidPublicKey) { try PublicKey(bytes: offCurve) }
        var hybrid = pub.uncompressed
        hybrid[0] = 6
        #expect(throws: HeraldError.invalidPublicKey) { try PublicKey(bytes: hybrid) }
        #expect(throws: HeraldError.invalidPublicKey) { try PublicKey(bytes: [UInt8]()) }
    }

    @Test func signThenRecoverRoundTripsForRandomMessages() throws {
        var rng = SplitMix64(seed: 0x5349_474e)
        for _ in 0..<200 {
            let key = try PrivateKey(bytes: rng.bytes(32))
            let digest = rng.bytes(32)
            let signature = try key.sign(digest: digest)
            #expect(try signature.recoverAddress(digest: digest) == key.address)
            #expect(try RecoverableSignature(bytes: signature.bytes) == signature)
            var otherDigest = digest
            otherDigest[0] ^= 0x80
            #expect(try signature.recoverAddress(digest: otherDigest) != key.address)
        }
    }

    @Test func everyAcceptedVRecoversTheSameKey() throws {
        let key = try PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
        let digest = Keccak256.hash(Array("v forms".utf8))
        let signature = try key.sign(digest: digest)
        let base = signature.compact
        for v in [signature.recoveryId, signature.recoveryId + 27] {
            #expect(try RecoverableSignature(bytes: base + [v]).recoverAddress(digest: digest) == key.address)
        }
        for v: UInt8 in [2, 26, 29, 35, 37, 255] {
            #expect(throws: HeraldError.invalidSignature) { try RecoverableSignature(bytes: base + [v]) }
        }
    }

    @Test func highSIsRefusedButItsLowTwinIsAccepted() throws {
        let r = Array(repeating: UInt8(1), count: 32)
        #expect(throws: HeraldError.invalidSignature) {
            try RecoverableSignature(bytes: r + (try Hex.decode(Self.halfNPlusOne)) + [27])
        }
        _ = try RecoverableSignature(bytes: r + (try Hex.decode(Self.halfN)) + [27])
    }

    @Test func outOfRangeRAndSAreRefused() throws {
        let one = [UInt8](repeating: 0, count: 31) + [1]
        let zero = [UInt8](repeating: 0, count: 32)
        let n = try Hex.decode(Self.n)
        for (r, s) in [(zero, one), (one, zero), (n, one), (one, n), ([UInt8](repeating: 0xff, count: 32), one)] {
            #expect(throws: HeraldError.invalidSignature) { try RecoverableSignature(bytes: r + s + [27]) }
        }
        #expect(throws: HeraldError.invalidSignature) { try RecoverableSignature(bytes: one + one) }
    }

    @Test func aSignatureWithNoRecoverablePointThrowsInsteadOfCrashing() throws {
        // r = 5 has no point with x = 5 on secp256k1 (5^3 + 7 = 132 is not a square mod p), so recovery fails.
        let r = [UInt8](repeating: 0, count: 31) + [5]
        let s = [UInt8](repeating: 0, count: 31) + [1]
        let signature = try RecoverableSignature(bytes: r + s + [27])
        #expect(throws: HeraldError.recoveryFailed) {
            try signature.recoverPublicKey(digest: [UInt8](repeating: 7, count: 32))
        }
    }

    @Test func ecdhIsSymmetric() throws {
        let a = PrivateKey.generate()
        let b = PrivateKey.generate()
        #expect(try a.sharedSecretX(with: b.publicKey) == b.sharedSecretX(with: a.publicKey))
    }

    @Test func privateKeyDescriptionDoesNotRevealTheKey() throws {
        let key = try PrivateKey(hex: "0x107be946709e41b7895eea9f2dacf998a0a9124acbb786f0fd1a826101581a07")
        #expect(!"\(key)".contains("107be946"))
    }
}
