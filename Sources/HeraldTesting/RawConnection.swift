import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Raw sockets for tests of what HTTP clients can do to the server (slow requests, pipelining, framing),
// blocking, so each runs on a thread of its own (`onOwnThread`), never on the test runner's shared pool.

/// A raw TCP connection to 127.0.0.1.
public final class RawConnection {
    public let descriptor: Int32

    public init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw CocoaError(.fileReadUnknown) }
    }

    /// Sends bytes; false once the server has closed the connection.
    @discardableResult
    public func send(_ text: String) -> Bool {
        text.utf8CString.withUnsafeBufferPointer { buffer in
            Glibc.send(descriptor, buffer.baseAddress, buffer.count - 1, Int32(MSG_NOSIGNAL)) > 0
        }
    }

    /// Whether the server closed the connection within `seconds` (a read returns end of file).
    public func closedByServer(within seconds: Int) -> Bool {
        waitAtMost(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    /// The server's answer: its head, and the body as far as `Content-Length` says, or all that
    /// arrives before the server closes or `seconds` pass.
    public func answer(within seconds: Int = 10) -> String {
        String(decoding: receive(within: seconds) { !Self.completeAnswers($0).isEmpty }, as: UTF8.self)
    }

    /// The status codes of the next `count` answers (pipelined requests' answers, in order), or of as
    /// many as arrive whole before the server closes or `seconds` pass.
    public func statusCodes(of count: Int, within seconds: Int = 10) -> [Int] {
        let received = receive(within: seconds) { Self.completeAnswers($0).count >= count }
        return Self.completeAnswers(received).compactMap { Int($0.dropFirst("HTTP/1.1 ".count).prefix(3)) }
    }

    /// What arrives until `enough` says so, the server closes, or `seconds` pass without a byte.
    private func receive(within seconds: Int, until enough: ([UInt8]) -> Bool) -> [UInt8] {
        waitAtMost(seconds)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !enough(received) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return received
    }

    /// Reads give up after `seconds` without a byte.
    private func waitAtMost(_ seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The whole answers at the start of `bytes`, in order: each a head and as much body as its
    /// `Content-Length` says (none without one).
    public static func completeAnswers(_ bytes: [UInt8]) -> [String] {
        var text = Substring(String(decoding: bytes, as: UTF8.self))
        var answers: [String] = []
        while let end = text.range(of: "\r\n\r\n") {
            let head = text[..<end.lowerBound].lowercased()
            let length =
                head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            let body = text[end.upperBound...].utf8
            guard body.count >= length else { break }
            let answerEnd = body.index(body.startIndex, offsetBy: length)
            answers.append(String(text[..<answerEnd]))
            text = text[answerEnd...]
        }
        return answers
    }

    deinit { close(descriptor) }
}

/// Runs `body` on a new thread and returns its result.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
