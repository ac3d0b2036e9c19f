import HTTPTypes
import Hummingbird
import NIOCore

/// The `text/plain` answers of Bisq's legacy `GET /relay` (docs/protocol.md §8), which Bisq's desktop reads as a
/// line of text, not as §3's JSON error.
enum BisqPlainText {
    static func response(_ text: String, status: HTTPResponse.Status = .ok, retryAfter: Int? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    static func tooManyRequests(_ text: String, retryAfter: Int) -> Response {
        response(text, status: .tooManyRequests, retryAfter: retryAfter)
    }
}

/// A request fault of `GET /relay`: answered `400 text/plain` with this one line.
struct BisqRelayFault: Error {
    let line: String

    init(_ line: String) { self.line = line }
}
