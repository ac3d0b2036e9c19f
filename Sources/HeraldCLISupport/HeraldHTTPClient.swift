package import AsyncHTTPClient
package import Foundation
package import HeraldCore
package import NIOCore
package import NIOHTTP1

/// The CLI's side of docs/protocol.md §3: one request, one answer, failures as the exit codes of CLI.md
/// (3 the server refused, printing its code; 4 unreachable or 5xx).
package struct HeraldHTTPClient {
    package let server: URL
    package var client: HTTPClient = cliHTTPClient
    package var timeout: TimeAmount = .seconds(15)

    /// `/v1/info` as the client needs it.
    package struct ServerInfo: Sendable {
        package let audience: String
        package let chainId: UInt256
        package let maxValiditySeconds: Int64
        package let version: String
    }

    package init(server: String) throws {
        guard let url = URL(string: server), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw CLIError(.usage, "--server must be an http(s) URL such as http://127.0.0.1:8080, not \(server)")
        }
        self.server = url
    }

    package func info() async throws -> ServerInfo {
        let json = try await send(method: .GET, path: "/v1/info", body: nil)
        guard let audience = json["audience"]?.stringValue, case .number(let chainText)? = json["chainId"],
            let chainId = UInt256(decimal: chainText), case .number(let windowText)? = json["maxValiditySeconds"],
            // Bounded as a server's setting is: a hostile server's number must not trap the signer's
            // clock arithmetic (a negative one did, converted to UInt64).
            let window = RemoteNumber.integer(windowText, in: 1...86_400)
        else {
            throw CLIError(
                .unreachable,
                "\(server.absoluteString) answered /v1/info without audience, chainId or maxValiditySeconds: not a Herald server?"
            )
        }
        return ServerInfo(
            audience: audience, chainId: chainId, maxValiditySeconds: window,
            version: json["version"]?.stringValue ?? "?")
    }

    /// The values of unlabelled series of `GET /metrics` (`process_cpu_seconds_total`, the store writer's
    /// counters), by name: those the server publishes; none when it cannot be reached.
    package func metricValues(_ names: Set<String>) async -> [String: Double] {
        guard let text = await metricsText() else { return [:] }
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, names.contains(String(parts[0])), let value = Double(parts[1]) {
                values[String(parts[0])] = value
            }
        }
        return values
    }

    /// `GET /metrics` as text; nil when it cannot be had.
    package func metricsText() async -> String? {
        var request = HTTPClientRequest(url: server.absoluteString.trimmingTrailingSlashes + "/metrics")
        request.headers.add(name: "User-Agent", value: HeraldVersion.userAgent)
        guard let response = try? await client.execute(request, timeout: timeout), response.status.code == 200,
            let body = try? await response.body.collect(upTo: 4 << 20)
        else { return nil }
        return String(buffer: body)
    }

    /// POSTs JSON and returns the parsed success body. `answerLimit`: the longest answer read.
    package func post(
        _ path: String, json text: String, answerLimit: Int = defaultAnswerLimit
    ) async throws -> JSONValue {
        try await send(method: .POST, path: path, body: Array(text.utf8), answerLimit: answerLimit)
    }

    /// Answers are small, but for a broadcast's: one sid per subscriber.
    package static let defaultAnswerLimit = 1 << 20

    /// A success answer, and whether it is a stored one given again (`Idempotent-Replay: true`).
    package struct Answer: Sendable {
        package let json: JSONValue
        package let idempotentReplay: Bool
    }

    /// POSTs a signed operation, and after a timeout, a network error or a 5xx sends the same bytes
    /// again: at most `tries` sends, each started before `expiresAt` (Unix seconds). A copy of an
    /// operation the server applied is answered its first answer (docs/protocol.md §11.2), so a retry
    /// never applies it twice. `pause(n)` is the wait before the n-th retry.
    package func postOperation(
        _ path: String, json text: String, expiresAt: Int64, tries: Int = 3, answerLimit: Int = defaultAnswerLimit,
        now: () -> Int64 = { Int64(Date().timeIntervalSince1970) },
        pause: (Int) async throws -> Void = { try await Task.sleep(for: .seconds($0)) }
    ) async throws -> Answer {
        var sent = 0
        while true {
            sent += 1
            do {
                return try await exchange(method: .POST, path: path, body: Array(text.utf8), answerLimit: answerLimit)
            } catch let failure as Transient {
                guard sent < tries else { throw failure.error }
                try await pause(sent)
                guard now() < expiresAt else { throw failure.error }
            }
        }
    }

    package func send(
        method: HTTPMethod, path: String, body: [UInt8]?, headers extra: [(String, String)] = [],
        answerLimit: Int = defaultAnswerLimit
    ) async throws -> JSONValue {
        do {
            return try await exchange(
                method: method, path: path, body: body, headers: extra, answerLimit: answerLimit
            ).json
        } catch let failure as Transient {
            throw failure.error
        }
    }

    /// A failure that the same request may not meet again: no answer (a timeout, a refused or broken
    /// connection) or a 5xx.
    private struct Transient: Error {
        let error: CLIError
    }

    private func exchange(
        method: HTTPMethod, path: String, body: [UInt8]?, headers extra: [(String, String)] = [],
        answerLimit: Int
    ) async throws -> Answer {
        let url = server.absoluteString.trimmingTrailingSlashes + path
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "User-Agent", value: HeraldVersion.userAgent)
        request.headers.add(name: "Accept", value: "application/json")
        for (name, value) in extra { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await client.execute(request, timeout: timeout)
            bytes = try await response.body.collect(upTo: answerLimit)
        } catch is NIOTooManyBytesError {
            throw CLIError(.unreachable, "\(url) answered with more than \(answerLimit) bytes: not read")
        } catch {
            throw Transient(
                error: CLIError(.unreachable, "cannot reach \(server.absoluteString): \(Self.describe(error))"))
        }
        let parsed = try? JSONParser.parse(bytes.readableBytesView)
        switch response.status.code {
        case 200..<300:
            guard let parsed else {
                throw CLIError(.unreachable, "\(url) answered \(response.status.code) without JSON")
            }
            return Answer(json: parsed, idempotentReplay: response.headers.first(name: "Idempotent-Replay") == "true")
        case 500...:
            throw Transient(
                error: CLIError(
                    .unreachable,
                    "\(server.absoluteString) failed: HTTP \(response.status.code) \(Self.errorText(parsed))"))
        default:
            if let code = parsed?["error"]?["code"]?.stringValue {
                throw CLIError(.refused, "\(code): \(parsed?["error"]?["message"]?.stringValue ?? "")")
            }
            throw CLIError(.refused, "HTTP \(response.status.code) from \(url)")
        }
    }

    private static func errorText(_ json: JSONValue?) -> String {
        guard let error = json?["error"] else { return "" }
        return "(\(error["code"]?.stringValue ?? "?"): \(error["message"]?.stringValue ?? ""))"
    }

    package static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        if text.contains("connectTimeout") { return "connection timed out" }
        if text.contains("Connection refused") || text.contains("connectionRefused") { return "connection refused" }
        if text.contains("deadlineExceeded") { return "no answer in time" }
        return text
    }
}

extension String {
    package var trimmingTrailingSlashes: String {
        var text = self
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}

/// The CLI's one HTTP client: it fails fast on a refused connection instead of retrying until the
/// deadline, and never follows a redirect (a signed operation goes only where the user said).
package let cliHTTPClient: HTTPClient = {
    var configuration = HTTPClient.Configuration(
        redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(30)))
    configuration.connectionPool.retryConnectionEstablishment = false
    return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
}()
