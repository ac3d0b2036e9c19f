import AsyncHTTPClient
import Foundation
import HeraldCLISupport
import HeraldCore
import NIOCore

/// Sends a Bisq message to a phone the way Bisq's desktop does: encrypted with the phone's key and
/// handed to `GET /relay` (docs/protocol.md §8), which answers `success` in plain text once it is queued.
struct BisqRelayClient {
    let server: URL

    init(server: String) throws {
        // The same URL rules as every other --server.
        self.server = try HeraldHTTPClient(server: server).server
    }

    /// Encrypts and sends `message`. SETUP_CONFIRMATION and ERASE go to APNs's production host and
    /// without sound, as Bisq sends them; other messages to the phone's own host.
    func send(_ message: BisqMessage, to phone: BisqPhoneBook.Phone, sound: Bool) async throws {
        let envelope = try BisqMessageCipher.encrypt(message, key: phone.key, platform: phone.platform)
        let managing = !message.type.isUserFacing
        let query = [
            ("isAndroid", phone.platform == .android ? "true" : "false"),
            ("isProduction", managing || phone.platform != .iosSandbox ? "true" : "false"),
            ("isContentAvailable", "true"), ("snd", sound && !managing ? "true" : "false"),
            ("token", Hex.encode(Array(phone.deviceToken.utf8))), ("msg", Hex.encode(Array(envelope.utf8))),
        ].map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let url = server.absoluteString.trimmingTrailingSlashes + "/relay?" + query
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "User-Agent", value: HeraldVersion.userAgent)
        let status: UInt
        let text: String
        do {
            let response = try await cliHTTPClient.execute(request, timeout: .seconds(15))
            status = response.status.code
            text = String(buffer: try await response.body.collect(upTo: 64 * 1024))
                .trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw CLIError(.unreachable, "cannot reach \(server.absoluteString): \(HeraldHTTPClient.describe(error))")
        }
        let line = String(text.prefix(200).split(separator: "\n").first ?? "")
        switch status {
        case 200 where text == "success":
            return
        case 500...:
            throw CLIError(.unreachable, "\(server.absoluteString) failed: HTTP \(status) \(line)")
        case 404:
            throw CLIError(.refused, "\(server.absoluteString) has no Bisq relay (start it with --bisq-relay)")
        default:
            throw CLIError(.refused, "the relay refused the push: HTTP \(status) \(line)")
        }
    }
}
