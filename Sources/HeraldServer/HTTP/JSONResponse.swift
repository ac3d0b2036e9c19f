import HTTPTypes
import HeraldCore
import Hummingbird
import NIOCore

/// JSON responses written with HeraldCore's writer: member order as given, no Foundation encoder.
enum JSONResponse {
    /// The media type of every JSON answer, errors included.
    static let contentType = "application/json; charset=utf-8"

    static func make(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        make(bytes: value.jsonBytes, status: status)
    }

    static func make(bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: contentType],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

extension HTTPField.Name {
    /// Marks a stored answer given again to the same operation (docs/protocol.md §11.2).
    static let idempotentReplay = Self("Idempotent-Replay")!
}
