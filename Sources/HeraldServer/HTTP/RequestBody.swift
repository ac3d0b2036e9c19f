import HTTPTypes
import Hummingbird
import NIOCore

/// Reading a JSON request body within the limits of docs/protocol.md §3: size first (a declared length over
/// the limit is refused before reading; a chunked body stops at the limit), then the media type.
enum RequestBody {
    static func readJSON(_ request: Request, limit: Int) async throws -> ByteBuffer {
        let body = try await collect(request, limit: limit)
        guard isJSON(request.headers[.contentType]) else { throw notJSON }
        return body
    }

    /// The body, refused with 413 past `limit` bytes (declared or sent).
    static func collect(_ request: Request, limit: Int) async throws -> ByteBuffer {
        if declaresMoreThan(limit, request.headers[.contentLength]) { throw tooLarge(limit) }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge(limit)
        } catch is NIOTooManyBytesError {
            // What a chunked body past the limit throws (no Content-Length to refuse up front).
            throw tooLarge(limit)
        }
        return body
    }

    /// A declared `Content-Length` over `limit`, refused before the body is read.
    static func declaresMoreThan(_ limit: Int, _ contentLength: String?) -> Bool {
        guard let contentLength, let length = Int(contentLength) else { return false }
        return length > limit
    }

    static func tooLarge(_ limit: Int) -> APIError {
        APIError(.payloadTooLarge, "the request body is larger than \(limit) bytes")
    }

    static let notJSON = APIError(
        .unsupportedMediaType, "Content-Type must be application/json (charset utf-8 or none)")

    /// `application/json`, optionally with `charset=utf-8`, any case, nothing else.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        // What almost every client sends, checked without splitting and lowercasing copies of it.
        if contentType == "application/json" { return true }
        let parts = contentType.split(separator: ";").map { String($0).trimmed.lowercased() }
        guard parts.first == "application/json" else { return false }
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { String($0).trimmed }
            guard pair.count == 2, pair[0] == "charset", pair[1].trimmingQuotes == "utf-8" else { return false }
        }
        return true
    }
}

extension String {
    fileprivate var trimmingQuotes: String {
        hasPrefix("\"") && hasSuffix("\"") && count >= 2 ? String(dropFirst().dropLast()) : self
    }
}
