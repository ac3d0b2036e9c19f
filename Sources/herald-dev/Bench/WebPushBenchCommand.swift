import ArgumentParser
import Crypto
import Foundation
import HeraldCLISupport
import HeraldCore

/// `herald-dev bench webpush`: the cost of one RFC 8291 encryption (docs/protocol.md §9) against the BoringSSL
/// calls it is made of, timed alone in the same run: the ephemeral key's point (a scalar
/// multiplication), the ECDH, the three HKDFs and one AES-128-GCM seal. The difference is what Herald's composition adds.
struct WebPushBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush",
        abstract: "µs per Web Push encryption (RFC 8291) against the BoringSSL steps it is made of.")

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: "Seconds per round of each benchmark.")
    var seconds: Double = 1.0

    @Option(name: .long, help: "Rounds per benchmark; the median is reported.")
    var rounds: Int = 3

    @Option(name: .long, help: "Plaintext bytes (at most 3993).")
    var size: Int = 1024

    func validate() throws {
        guard seconds > 0, seconds <= 60, rounds >= 1, rounds <= 100,
            (1...WebPushCipher.maximumPlaintext).contains(size)
        else { throw ValidationError("--seconds in (0, 60], --rounds in [1, 100], --size in [1, 3993]") }
    }

    struct Report: Encodable {
        let results: [BenchRunner.Result]
        let stepsMicroseconds: Double
        let encryptMicroseconds: Double
        let debugBuild: Bool
    }

    func run() async throws {
        let subscriber = P256.KeyAgreement.PrivateKey()
        let peer = subscriber.publicKey
        let auth = SecureRandom.bytes(16)
        let salt = SecureRandom.bytes(16)
        let plaintext = [UInt8](repeating: 0x7b, count: size)
        let sender = P256.KeyAgreement.PrivateKey()
        let scalar = sender.rawRepresentation
        let shared = try sender.sharedSecretFromKeyAgreement(with: peer)
        let ikm = SymmetricKey(size: .bits256)
        let cek = SymmetricKey(size: .bits128)
        let nonce = AES.GCM.Nonce()
        if !global.json {
            print(
                "herald-dev bench webpush: \(rounds) interleaved round(s) of \(seconds) s each, median shown, one core")
            if CryptoBenchCommand.isDebugBuild { print("warning: this is a debug build; use `swift build -c release`") }
        }
        let cases: [BenchRunner.Case] = [
            .init(name: "Web Push encrypt (RFC 8291, \(size) bytes)") {
                try WebPushCipher.encrypt(plaintext, to: peer, authSecret: auth).count
            },
            .init(name: "step: P-256 point of a scalar") {
                Int(try P256.KeyAgreement.PrivateKey(rawRepresentation: scalar).publicKey.rawRepresentation.first ?? 0)
            },
            .init(name: "step: P-256 ECDH") {
                try sender.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { Int($0[0]) }
            },
            .init(name: "step: 3 × HKDF-SHA-256") {
                let first = shared.hkdfDerivedSymmetricKey(
                    using: SHA256.self, salt: auth, sharedInfo: [1], outputByteCount: 32)
                let second = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: [2], outputByteCount: 16)
                let third = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: [3], outputByteCount: 12)
                return first.bitCount + second.bitCount + third.bitCount
            },
            .init(name: "step: AES-128-GCM seal (\(size + 1) bytes)") {
                try AES.GCM.seal(plaintext + [2], using: cek, nonce: nonce).ciphertext.count
            },
        ]
        let progress = ProgressLine(
            "bench webpush", total: rounds * cases.count, unit: "rounds", json: global.json, showsRate: false)
        let results = try BenchRunner(secondsPerRound: seconds, rounds: rounds).measure(cases, progress: progress)
        let steps = results.dropFirst().reduce(0) { $0 + $1.microsecondsPerOp }
        let report = Report(
            results: results, stepsMicroseconds: steps, encryptMicroseconds: results[0].microsecondsPerOp,
            debugBuild: CryptoBenchCommand.isDebugBuild)
        if global.json {
            try Terminal.printJSON(report)
            return
        }
        for result in results {
            let rate = String(format: "%12.0f", result.opsPerSecond)
            let micros = String(format: "%10.2f", result.microsecondsPerOp)
            print(result.name.padding(toLength: 44, withPad: " ", startingAt: 0) + rate + " ops/s" + micros + " µs")
        }
        print(
            String(
                format: "encryption %.2f µs against %.2f µs for its BoringSSL steps alone (×%.2f)",
                report.encryptMicroseconds, steps, report.encryptMicroseconds / steps))
    }
}
