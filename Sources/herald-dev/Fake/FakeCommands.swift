import ArgumentParser
import Crypto
import Foundation
import HeraldTesting

/// `herald-dev fake-apns`: a local APNs for manual trials and benchmarks. It makes a provider key and a TLS
/// certificate, writes them where `herald serve` can read them, prints the flags to use, and reports
/// what it receives every second until interrupted.
struct FakeAPNsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-apns", abstract: "Run a local fake APNs (HTTP/2 over TLS) for trials and benchmarks.")

    @Option(name: .long, help: "Port on 127.0.0.1 (0: a free one).") var port: Int = 0
    @Option(name: .long, help: "Folder for the generated AuthKey.p8 and ca.pem.") var folder: String =
        "./herald-fake-apns"
    @Option(name: .customLong("key-id"), help: "Key id the provider tokens must carry.") var keyID: String =
        "FAKEKEY001"
    @Option(name: .customLong("team-id"), help: "Team id the provider tokens must carry.") var teamID: String =
        "FAKETEAM01"
    @Option(name: .long, help: "apns-topic the pushes must carry.") var topic: String = "org.example.herald"
    @Flag(name: .long, help: "Keep every request in memory (off: count only, for load runs).") var keep = false
    @Flag(name: .long, help: "Print each push as it arrives: token prefix, push type, priority, collapse id, body.")
    var print = false

    func run() async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let key = P256.Signing.PrivateKey()
        let keyFile = folder + "/AuthKey.p8"
        let caFile = folder + "/ca.pem"
        try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: keyFile))
        let fake = try FakeAPNs(
            publicKey: key.publicKey, keyID: keyID, teamID: teamID, topic: topic, keepRequests: keep || print)
        try fake.certificate.writeCertificate(to: caFile)
        try await fake.start(port: port)
        FakeReport.say("fake APNs listening on \(fake.url)")
        FakeReport.say(
            "herald serve --apns-key-file \(keyFile) --apns-key-id \(keyID) --apns-team-id \(teamID) "
                + "--apns-topic \(topic) --apns-host \(fake.url) --apns-sandbox-host \(fake.url) --apns-ca-file \(caFile)"
        )
        if print {
            try await Self.printPushes(of: fake)
        } else {
            try await FakeReport.every(second: { fake.tally })
        }
    }

    /// A line per push as it arrives, for trials by hand (docs/subscriber-control.md: the badge follows reads
    /// made on another device). Tokens are shown by their first eight characters only.
    private static func printPushes(of fake: FakeAPNs) async throws {
        var shown = 0
        while !Task.isCancelled {
            try await Task.sleep(for: .milliseconds(200))
            let received = fake.received
            for push in received.dropFirst(shown) {
                let header = { (name: String) in push.headers[name] ?? "-" }
                FakeReport.say(
                    "push \(push.deviceToken.prefix(8))… type=\(header("apns-push-type")) "
                        + "priority=\(header("apns-priority")) collapse=\(header("apns-collapse-id")) "
                        + "\(String(decoding: push.body, as: UTF8.self))"
                        + (push.problems.isEmpty ? "" : " problems: \(push.problems.joined(separator: "; "))"))
            }
            shown = received.count
        }
    }
}

/// `herald-dev fake-fcm`: a local FCM and OAuth token endpoint (plain HTTP on loopback).
struct FakeFCMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-fcm", abstract: "Run a local fake FCM with its OAuth token endpoint.")

    @Option(name: .long, help: "Port on 127.0.0.1 (0: a free one).") var port: Int = 0
    @Option(name: .long, help: "Folder for the generated service-account.json.") var folder: String =
        "./herald-fake-fcm"

    func run() async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let fake = try FakeFCM()
        try await fake.start(port: port)
        let accountFile = folder + "/service-account.json"
        try Data(fake.serviceAccountJSON).write(to: URL(fileURLWithPath: accountFile))
        FakeReport.say("fake FCM listening on \(fake.url) (token endpoint \(fake.tokenURL))")
        FakeReport.say("herald serve --fcm-service-account \(accountFile) --fcm-endpoint \(fake.url)")
        try await FakeReport.every(second: { (fake.received.count, fake.received.filter(\.problems.isEmpty).count) })
    }
}

enum FakeReport {
    /// Unbuffered, so that each line reaches a pipe at once.
    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    /// Prints a line each second in which something arrived: totals and the rate over that second.
    static func every(second tally: @Sendable () -> (answered: Int, accepted: Int)) async throws {
        var last = 0
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(1))
            let (answered, accepted) = tally()
            if answered != last {
                FakeReport.say("received \(answered) (\(accepted) accepted), \(answered - last)/s")
                last = answered
            }
        }
    }
}

/// `herald-dev fake-webpush`: a local Web Push service (TLS on loopback) for trials and benchmarks. Its
/// endpoints are `https://localhost:PORT/<anything>`; serve with `--webpush-allow-network 127.0.0.0/8`.
struct FakeWebPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-webpush", abstract: "Run a local fake Web Push service (HTTPS) for trials and benchmarks.")

    @Option(name: .long, help: "Port on 127.0.0.1 (0: a free one).") var port: Int = 0
    @Option(name: .long, help: "Folder for the generated ca.pem.") var folder: String = "./herald-fake-webpush"
    @Flag(name: .long, help: "Keep every request in memory (off: count only, for load runs).") var keep = false

    func run() async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let fake = try FakeWebPush(keepRequests: keep)
        let caFile = folder + "/ca.pem"
        try fake.certificate.writeCertificate(to: caFile)
        try await fake.start(port: port)
        FakeReport.say("fake Web Push listening on \(fake.endpoint("/"))")
        FakeReport.say("herald serve --webpush-ca-file \(caFile) --webpush-allow-network 127.0.0.0/8 …")
        try await FakeReport.every(second: { fake.tally })
    }
}
