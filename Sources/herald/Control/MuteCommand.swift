import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore

/// `herald mute CHANNEL (--for DURATION | --until TIME)` and `herald unmute CHANNEL` (docs/protocol.md §10):
/// the server stops pushing the channel's notifications to every device of this wallet until then.
struct MuteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mute",
        abstract: "Stop a channel's pushes to your devices for a while (items still arrive in the feed).")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The channel's address.") var channel: String
    @Option(name: .long, help: "Server URL.") var server: String
    @Option(name: .customLong("for"), help: "How long: 30m, 8h, 2d (s, m, h, d; at most 3650d).") var duration: String?
    @Option(name: .long, help: "Until a Unix time or an ISO 8601 time with offset.") var until: String?
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?

    func run() async throws {
        let address = try EthereumAddress.argument(channel, what: "a channel address")
        let now = Int64(Date().timeIntervalSince1970)
        let end: Int64
        switch (duration, until) {
        case (let text?, nil): end = now + (try Self.seconds(text))
        case (nil, let text?): end = try Self.time(text)
        default: throw CLIError(.usage, "give --for DURATION or --until TIME")
        }
        try await Self.send(
            until: end, channel: address, global: global, server: server, audience: audience)
    }

    static func send(
        until: Int64, channel: EthereumAddress, global: GlobalOptions, server: String, audience: String?
    ) async throws {
        guard until >= 0 else { throw CLIError(.usage, "the time is before 1970") }
        let session = try await SigningSession.open(global: global, server: server, acceptAudience: audience)
        let (issuedAt, expiresAt) = session.window
        let operation = Mute(
            channel: channel, subscriber: session.key.address, until: UInt256(UInt64(until)),
            audience: session.info.audience, nonce: UInt256.randomNonce(), issuedAt: issuedAt, expiresAt: expiresAt)
        let answer = try await session.client.post("/v1/mutes", json: session.sign(operation, scheme: .eip712).jsonText)
        if global.json {
            print(answer.jsonText)
        } else {
            let muted = answer["mutedUntil"]?.jsonText ?? "?"
            print(muted == "0" ? "unmuted \(channel)" : "muted \(channel) until \(muted)")
        }
    }

    /// `30m`, `8h`, `2d`: a positive whole number and one of s, m, h, d; at most 3650 days.
    static func seconds(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Int64(text.dropLast()), count > 0,
            count <= Mute.maximumSeconds / unit
        else {
            throw CLIError(.usage, "--for takes a duration such as 30m, 8h or 2d (at most 3650d), not \(text)")
        }
        return count * unit
    }

    /// A Unix time, or an ISO 8601 time with its offset (`2026-12-01T08:00:00+01:00`).
    static func time(_ text: String) throws -> Int64 {
        if let seconds = Int64(text) { return seconds }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: text) else {
            throw CLIError(.usage, "--until takes a Unix time or an ISO 8601 time with offset, not \(text)")
        }
        return Int64(date.timeIntervalSince1970)
    }
}

struct UnmuteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmute", abstract: "End a channel's mute: its pushes reach your devices again.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The channel's address.") var channel: String
    @Option(name: .long, help: "Server URL.") var server: String
    @Option(name: .long, help: "Accept this server audience when it differs from the one pinned.") var audience: String?

    func run() async throws {
        let address = try EthereumAddress.argument(channel, what: "a channel address")
        try await MuteCommand.send(until: 0, channel: address, global: global, server: server, audience: audience)
    }
}
