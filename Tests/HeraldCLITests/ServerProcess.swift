import AsyncHTTPClient
import Foundation
import HeraldTesting
import NIOCore
import Testing

/// A real `herald serve` in its own process, on a free port, for end-to-end and crash tests.
final class ServerProcess: @unchecked Sendable {
    let process = SpawnedProcess()
    let databasePath: String
    private(set) var port = 0
    private let output = Pipe()
    private let errors = Pipe()
    private let collected = OutputCollector()
    private var drains: [PipeDrain] = []

    /// `binary` defaults to the `herald` built next to the tests (the debug build under `swift test`).
    /// With `umask` (octal, as `sh` takes it) the server starts through `sh -c 'umask …; exec …'`.
    init(
        databasePath: String, extraArguments: [String] = [], binary: URL? = nil, logLevel: String = "warning",
        port: Int = 0, umask: String? = nil, rateLimit: String = "0"
    ) throws {
        self.databasePath = databasePath
        let herald = try binary ?? CLIRunner.binary()
        let arguments =
            [
                "serve", "--port", String(port), "--database", databasePath, "--audience", "herald-test",
                "--rate-limit", rateLimit,
                "--log-level", logLevel,
            ] + extraArguments
        if let umask {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "umask \(umask) && exec \"$0\" \"$@\"", herald.path] + arguments
        } else {
            process.executableURL = herald
            process.arguments = arguments
        }
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("HERALD_") { environment.removeValue(forKey: key) }
        process.environment = environment
        process.standardOutput = output
        process.standardError = errors
    }

    /// Starts the server and waits for its "listening" line.
    func start() async throws {
        try launch()
        // Generous: under make test's parallel suites a debug server on two busy cores was seen to take
        // over 30 s to print its line.
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if let port = collected.listeningPort() {
                self.port = port
                return
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ServerStartFailure(output: collected.text)
    }

    /// Starts the process without waiting for it to listen (for a server expected to refuse to start).
    func launch() throws {
        try process.run()
        let collector = collected
        drains = [output, errors].map { PipeDrain($0) { chunk in collector.append(chunk) } }
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Everything the process has written to stdout and stderr so far.
    var log: String { collected.text }

    func kill(_ signal: Int32) {
        Foundation.kill(process.processIdentifier, signal)
    }

    /// Waits for exit; returns the exit status (or the signal number for a signalled process).
    func waitForExit(timeout: Double = 60) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            kill(SIGKILL)
            throw ServerStartFailure(output: "the server did not exit within \(timeout) s")
        }
        // The last lines the server wrote, for tests that read `log` after the exit.
        for drain in drains { _ = drain.waitForEnd(timeout: 5) }
        return process.terminationStatus
    }

    struct ServerStartFailure: Error, CustomStringConvertible {
        let output: String
        var description: String { "herald serve did not start: \(output)" }
    }
}

/// Collects a child's stdout and stderr from the threads that drain them.
final class OutputCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    func append(_ chunk: Data) {
        lock.lock()
        data.append(chunk)
        lock.unlock()
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }

    /// Found anywhere, not only at a line's start: stdout and stderr share this buffer, and a log line
    /// written to stderr at the same moment can land in the middle of the listening line.
    func listeningPort() -> Int? {
        let marker = "herald listening on http://"
        let text = self.text
        guard let found = text.range(of: marker) else { return nil }
        let address = text[found.upperBound...].prefix { $0 != " " && $0 != "\n" }
        guard address.count < text.distance(from: found.upperBound, to: text.endIndex) else { return nil }
        return address.split(separator: ":").last.flatMap { Int($0) }
    }
}

/// Minimal HTTP for tests: POST JSON, GET. Over AsyncHTTPClient (NIO's own epoll loop), not
/// URLSession, whose Linux implementation watches its sockets with libdispatch sources: the same
/// machinery as the read sources `PipeDrain` avoids.
enum HTTP {
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        // Idle connections are dropped after 1 s, before any server of the tests closes them (the
        // shortest `--request-timeout` used is 2 s): reusing one the server is closing at that moment
        // fails the request with `remoteConnectionClosed`.
        configuration.connectionPool = .init(idleTimeout: .seconds(1), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    static func post(_ url: String, json: String) async throws -> (Int, Data) {
        try await post(url, body: json, contentType: "application/json")
    }

    static func post(_ url: String, form: String) async throws -> (Int, Data) {
        try await post(url, body: form, contentType: "application/x-www-form-urlencoded")
    }

    static func post(_ url: String, body: String, contentType: String) async throws -> (Int, Data) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        request.body = .bytes(ByteBuffer(string: body))
        return try await execute(request)
    }

    /// A GET that meets a kept-alive connection closed under it is sent once more on a new one, as
    /// URLSession (libcurl) did; a POST is not, since it may have been processed.
    static func get(_ url: String, authorization: String? = nil) async throws -> (Int, Data) {
        var request = HTTPClientRequest(url: url)
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        do {
            return try await execute(request)
        } catch let error as HTTPClientError where error == .remoteConnectionClosed {
            return try await execute(request)
        }
    }

    /// An answer with the headers the tests read.
    struct Exchange: Sendable {
        let status: Int
        let retryAfter: String?
        /// `Idempotent-Replay: true`: a stored answer given again (docs/protocol.md §11.2).
        var idempotentReplay = false
        let body: Data
    }

    static func exchange(_ url: String, json: String) async throws -> Exchange {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
        return try await exchange(request)
    }

    static func exchange(_ url: String, authorization: String) async throws -> Exchange {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: authorization)
        return try await exchange(request)
    }

    private static func exchange(_ request: HTTPClientRequest) async throws -> Exchange {
        let response = try await client.execute(request, timeout: .seconds(20))
        let body = try await response.body.collect(upTo: 64 << 20)
        return Exchange(
            status: Int(response.status.code), retryAfter: response.headers.first(name: "Retry-After"),
            idempotentReplay: response.headers.first(name: "Idempotent-Replay") == "true",
            body: Data(body.readableBytesView))
    }

    private static func execute(_ request: HTTPClientRequest) async throws -> (Int, Data) {
        let response = try await client.execute(request, timeout: .seconds(20))
        let body = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), Data(body.readableBytesView))
    }
}
