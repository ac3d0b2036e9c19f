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
        waitAtMost(seconds)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !Self.isComplete(received) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// The status codes of the next `count` answers (pipelined requests' answers, in order), or of as
    /// many as arrive before the server closes or `seconds` pass.
    public func statusCodes(of count: Int, within seconds: Int = 10) -> [Int] {
        waitAtMost(seconds)
        var received: [UInt8] = []
        var answers: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while answers.count < count || answers.last.map({ !Self.isComplete(Array(("HTTP/1.1 " + $0).utf8)) }) == true {
            let read = recv(descriptor, &buffer, buffer.count, 0)
            guard read > 0 else { break }
            received += buffer[..<read]
            answers = String(decoding: received, as: UTF8.self).components(separatedBy: "HTTP/1.1 ").dropFirst()
                .map { $0 }
        }
        return answers.compactMap { Int($0.prefix(3)) }
    }

    /// Reads give up after `seconds` without a byte.
    private func waitAtMost(_ seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    public static func isComplete(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<end.lowerBound].lowercased()
        let length =
            head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        return text[end.upperBound...].utf8.count >= length
    }

    deinit { close(descriptor) }
}

/// Runs `body` on a new thread and returns its result.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
