import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCLISupport
import HeraldCore
import NIOCore
import NIOHTTP1

struct RegisterBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Load-test POST /v1/devices with pre-signed, distinct registrations.",
        discussion: """
            Signs every operation first (unique nonces, --wallets wallets, distinct tokens), then sends them over \
            --concurrency keep-alive connections and prints requests/s, latency percentiles, status counts and \
            the server's CPU per request (from its /metrics' process_cpu_seconds_total). \
            Only the --server named is contacted: redirects are refused, and a non-loopback server needs --allow-remote. \
            Run the server with --rate-limit 0, or the limiter answers most requests with 429.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: "The Herald server to load, e.g. http://127.0.0.1:8080.")
    var server: String

    @Option(name: .long, help: "Number of registrations to send.")
    var requests: Int

    @Option(name: .long, help: "Concurrent connections.")
    var concurrency: Int = 64

    @Option(name: .long, help: "Signing wallets (default: one per 16 requests, under the server's per-wallet limit).")
    var wallets: Int?

    @Option(name: .long, help: "eip712 or eip191.")
    var scheme: String = "eip712"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Also write the signed bodies, one JSON line each, for wrk or other tools.", valueName: "FILE"))
    var writeBodies: String?

    @Flag(name: .long, help: "With --write-bodies: sign and write the bodies, send nothing (for wrk).")
    var signOnly = false

    @Flag(name: .long, help: "Allow a server that is not on this machine (loopback). Only load what you operate.")
    var allowRemote = false

    func validate() throws {
        guard requests >= 1, requests <= 10_000_000 else { throw ValidationError("--requests must be 1…10,000,000") }
        guard concurrency >= 1, concurrency <= 4096 else { throw ValidationError("--concurrency must be 1…4096") }
        if let wallets, wallets < 1 || wallets > requests { throw ValidationError("--wallets must be 1…--requests") }
        guard SignatureScheme(rawValue: scheme) != nil else {
            throw ValidationError("--scheme must be eip712 or eip191")
        }
        if signOnly && writeBodies == nil { throw ValidationError("--sign-only needs --write-bodies FILE") }
    }

    func run() async throws {
        let target = try HeraldHTTPClient(server: server)
        guard allowRemote || Self.isLoopback(target.server.host ?? "") else {
            throw CLIError(
                .usage,
                "\(target.server.absoluteString) is not on this machine; pass --allow-remote to load a server you operate"
            )
        }
        let info = try await target.info()
        let walletCount = wallets ?? max(1, (requests + 15) / 16)
        log(
            "server \(target.server.absoluteString) audience=\(info.audience) chainId=\(info.chainId) version=\(info.version)"
        )
        log("signing \(requests) registrations with \(walletCount) wallets …")
        let signStart = ContinuousClock.now
        let signing = ProgressLine("signing", total: requests, unit: "registrations", json: global.json)
        let bodies = try await RegisterBenchSigner.sign(
            count: requests, wallets: walletCount, info: info, scheme: SignatureScheme(rawValue: scheme) ?? .eip712,
            progress: signing)
        signing.finish()
        log(String(format: "signed in %.2f s", (ContinuousClock.now - signStart).seconds))
        if let writeBodies {
            let text = bodies.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n") + "\n"
            guard FileManager.default.createFile(atPath: writeBodies, contents: Data(text.utf8)) else {
                throw CLIError(.unexpected, "cannot write \(writeBodies)")
            }
            log("wrote \(bodies.count) bodies to \(writeBodies)")
            if signOnly { return }
        }
        log("sending over \(concurrency) connections …")
        let sending = ProgressLine("bench register", total: requests, unit: "requests", json: global.json)
        let before = await target.metricValues(ServerFigures.series)
        var result = try await RegisterBenchLoad.run(
            bodies: bodies, url: target.server.absoluteString.trimmingTrailingSlashes + "/v1/devices",
            concurrency: concurrency, progress: sending)
        let after = await target.metricValues(ServerFigures.series)
        sending.finish()
        let figures = ServerFigures(before: before, after: after, requests: result.requests, seconds: result.seconds)
        result.serverCPUMicrosecondsPerRequest = figures.cpuMicrosecondsPerRequest
        result.storeWriter = figures.storeWriter
        try result.print(json: global.json)
    }

    private func log(_ line: String) {
        if !global.json { print(line) }
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }
}

/// Signs the load before it is sent, using every core.
enum RegisterBenchSigner {
    static func sign(
        count: Int, wallets: Int, info: HeraldHTTPClient.ServerInfo, scheme: SignatureScheme,
        progress: ProgressLine? = nil
    ) async throws -> [[UInt8]] {
        let keys = (0..<wallets).map { _ in PrivateKey.generate() }
        let now = UInt64(Date().timeIntervalSince1970)
        let issuedAt = UInt256(now - 1)
        let expiresAt = UInt256(now - 1 + UInt64(min(info.maxValiditySeconds, 600)))
        let domain = HeraldDomain(chainId: info.chainId)
        let runId = SecureRandom.bytes(8)
        let slices = max(1, ProcessInfo.processInfo.activeProcessorCount)
        return try await withThrowingTaskGroup(of: (Int, [[UInt8]]).self) { group in
            for slice in 0..<slices {
                group.addTask {
                    var out: [[UInt8]] = []
                    for index in stride(from: slice, to: count, by: slices) {
                        let key = keys[index % wallets]
                        // Distinct per run and index: a token of 32 bytes, a nonce of 128 bits.
                        let token = Hex.encode(
                            runId + withUnsafeBytes(of: UInt64(index).bigEndian, Array.init)
                                + [UInt8](repeating: 0, count: 16))
                        let binding = DeviceBinding(
                            action: .register, wallet: key.address, platform: .ios, deviceToken: token,
                            audience: info.audience,
                            nonce: try UInt256(
                                bigEndian: runId + withUnsafeBytes(of: UInt64(index).bigEndian, Array.init)),
                            issuedAt: issuedAt, expiresAt: expiresAt)
                        out.append(Array(try binding.signed(with: key, scheme: scheme, domain: domain).jsonText.utf8))
                        progress?.advance()
                    }
                    return (slice, out)
                }
            }
            var parts = [[[UInt8]]](repeating: [], count: slices)
            for try await (slice, bodies) in group { parts[slice] = bodies }
            // Re-interleave so that request i is body i.
            var bodies: [[UInt8]] = []
            bodies.reserveCapacity(count)
            for index in 0..<count { bodies.append(parts[index % slices][index / slices]) }
            return bodies
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
