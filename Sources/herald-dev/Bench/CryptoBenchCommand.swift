import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore

struct CryptoBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crypto",
        abstract: "Operations per second of Herald's crypto, against bare libsecp256k1 in the same run.",
        discussion: "Targets: recover + address ≥ 0.9 × bare C recover + serialize; keccak256(65 bytes) ≥ 300,000/s."
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: "Seconds per round of each benchmark.")
    var seconds: Double = 1.0

    @Option(name: .long, help: "Rounds per benchmark; the median is reported.")
    var rounds: Int = 3

    func validate() throws {
        guard seconds > 0, seconds <= 60, rounds >= 1, rounds <= 100 else {
            throw ValidationError("--seconds must be in (0, 60] and --rounds in [1, 100]")
        }
    }

    struct Report: Encodable {
        let results: [BenchRunner.Result]
        let recoverRatioToBareC: Double
        let recoverTargetMet: Bool
        let keccakTargetMet: Bool
        let debugBuild: Bool
    }

    func run() async throws {
        let fixtures = try CryptoBenchFixtures()
        if !global.json {
            print(
                "herald-dev bench crypto: \(rounds) interleaved round(s) of \(seconds) s each, median shown, one core")
            if Self.isDebugBuild { print("warning: this is a debug build; use `swift build -c release`") }
        }
        let cases: [BenchRunner.Case] = [
            .init(name: "keccak256 (65 bytes)") { Int(Keccak256.hash(fixtures.publicKeyBytes)[0]) },
            .init(name: "bare C: secp256k1 recover + serialize") {
                BareSecp256k1.recoverAndSerialize(signature: fixtures.signatureBytes, digest: fixtures.digest)
            },
            .init(name: "recover + address") {
                Int(try fixtures.signature.recoverAddress(digest: fixtures.digest).bytes[0])
            },
            .init(name: "EIP-712 DeviceBinding verify (parsed)") {
                fixtures.verifier.verify(fixtures.rawEnvelope, as: DeviceBinding.self, now: fixtures.now).verified
                    == nil ? 0 : 1
            },
            .init(name: "EIP-712 DeviceBinding verify (from JSON)") {
                fixtures.verifier.verify(json: fixtures.envelopeJSON, as: DeviceBinding.self, now: fixtures.now)
                    .verified == nil ? 0 : 1
            },
            .init(name: "ECIES decrypt (15-byte secret)") {
                try ECIES.decrypt(fixtures.eciesBlob, with: fixtures.key).count
            },
            .init(name: "CryptoJS AES decrypt (256 bytes)") {
                try CryptoJSAES.decrypt(fixtures.cryptoJSBlob, passphrase: fixtures.secret).utf8.count
            },
            .init(
                name: "keystore unlock (light scrypt)",
                body: {
                    Int(try fixtures.lightKeystore.decrypt(passphrase: "bench").rawBytes[0])
                }, minimumSeconds: 1),
        ]
        let progress = ProgressLine(
            "bench crypto", total: rounds * cases.count, unit: "rounds", json: global.json, showsRate: false)
        let results = try BenchRunner(secondsPerRound: seconds, rounds: rounds).measure(cases, progress: progress)
        let keccak = results[0]
        let ratio = results[2].opsPerSecond / results[1].opsPerSecond
        let report = Report(
            results: results, recoverRatioToBareC: ratio, recoverTargetMet: ratio >= 0.9,
            keccakTargetMet: keccak.opsPerSecond >= 300_000, debugBuild: Self.isDebugBuild)
        if global.json {
            try Terminal.printJSON(report)
            return
        }
        for result in results {
            let rate = String(format: "%12.0f", result.opsPerSecond)
            let micros = String(format: "%10.2f", result.microsecondsPerOp)
            print(result.name.padding(toLength: 44, withPad: " ", startingAt: 0) + rate + " ops/s" + micros + " µs")
        }
        let recoverVerdict = report.recoverTargetMet ? "met" : "NOT met"
        let keccakVerdict = report.keccakTargetMet ? "met" : "NOT met"
        print(String(format: "recover + address / bare C = %.3f (target ≥ 0.90: %@)", ratio, recoverVerdict))
        print(
            String(format: "keccak256 (65 bytes) = %.0f/s (target ≥ 300,000/s: %@)", keccak.opsPerSecond, keccakVerdict)
        )
    }

    static var isDebugBuild: Bool {
        #if DEBUG
        return true
        #else
        return false
        #endif
    }
}

/// Inputs made once, before any timing.
struct CryptoBenchFixtures {
    let key: PrivateKey
    let publicKeyBytes: [UInt8]
    let digest: [UInt8]
    let signature: RecoverableSignature
    let signatureBytes: [UInt8]
    let verifier: OperationVerifier
    let now: Int64
    let rawEnvelope: RawEnvelope
    let envelopeJSON: [UInt8]
    let secret: String
    let eciesBlob: String
    let cryptoJSBlob: String
    let lightKeystore: Keystore

    init() throws {
        key = try PrivateKey(hex: "0x107be946709e41b7895eea9f2dacf998a0a9124acbb786f0fd1a826101581a07")
        publicKeyBytes = key.publicKey.uncompressed
        digest = Keccak256.hash(Array("herald bench".utf8))
        signature = try key.sign(digest: digest)
        signatureBytes = signature.bytes
        verifier = OperationVerifier(audience: "https://push.example.org")
        now = 1_763_769_700
        let binding = DeviceBinding(
            action: .register, wallet: key.address, platform: .ios, deviceToken: String(repeating: "6b1f", count: 16),
            audience: "https://push.example.org", nonce: UInt256(42), issuedAt: UInt256(1_763_769_600),
            expiresAt: UInt256(1_763_769_900))
        let envelope = try binding.signed(with: key, scheme: .eip712, domain: verifier.domain)
        rawEnvelope = envelope.raw
        envelopeJSON = Array(envelope.jsonText.utf8)
        secret = "k3Y9s0mEs3cr3tZ"
        eciesBlob = try ECIES.encrypt(text: secret, to: key.publicKey)
        cryptoJSBlob = try CryptoJSAES.encrypt(String(repeating: "x", count: 256), passphrase: secret)
        lightKeystore = try Keystore(encrypting: key, passphrase: "bench", kdf: .lightScrypt())
    }
}
