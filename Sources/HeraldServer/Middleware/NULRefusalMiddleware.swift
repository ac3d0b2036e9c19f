import Hummingbird

/// U+0000 is refused with `400 bad_request` before any route, and so any database, sees it: PostgreSQL's
/// text refuses it (the insert fails with a 500) and SQLite would keep a string that C code cuts short.
/// A request carries text in four forms, each refused in the one place it is decoded: the path and
/// query here (as `%00`: a raw NUL never gets past the HTTP parser); JSON bodies and the FeedAccess
/// header in ``JSONParser`` (`\u0000`); Bisq's hex parameters in ``BisqRelayRequest``; the relay's
/// OAuth form in ``OAuthForm``.
struct NULRefusalMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    static let message = "the path or query holds %00 (U+0000, NUL), which is not accepted"

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard Self.holdsEncodedNUL(request.uri.description) else { return try await next(request, context) }
        // Bisq's legacy route answers its faults as one plain line (docs/protocol.md §8).
        if request.uri.path == RouteTable.bisqRelay.path {
            return BisqPlainText.response(Self.message, status: .badRequest)
        }
        throw APIError(.badRequest, Self.message)
    }

    /// Whether the request target, as sent, holds `%00`. In a URI `%` always starts an escape, so
    /// the substring is exactly the escaped NUL (`%2500` is the text "%00", and is not matched).
    static func holdsEncodedNUL(_ target: String) -> Bool {
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in target.utf8 {
            if previous == (UInt8(ascii: "%"), UInt8(ascii: "0")) && byte == UInt8(ascii: "0") { return true }
            previous = (previous.1, byte)
        }
        return false
    }
}
