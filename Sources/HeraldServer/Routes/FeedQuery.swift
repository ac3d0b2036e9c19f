import Hummingbird

/// `?page=1&limit=10&spam=false` (docs/protocol.md §3): `page` ≥ 1, 1 ≤ `limit` ≤ 100, `spam` true or false;
/// anything else is `bad_request`. Unknown parameters are ignored.
struct FeedQuery {
    static let maximumLimit = 100
    /// Deep enough for any real feed, small enough that `page × limit` never overflows.
    static let maximumPage = 1_000_000

    var page = 1
    var limit = 10
    var spam = false

    init(_ request: Request) throws {
        let parameters = request.uri.queryParameters
        if let text = parameters["page"] {
            guard let value = Int(text), (1...Self.maximumPage).contains(value) else {
                throw APIError(.badRequest, "page must be an integer from 1 to \(Self.maximumPage)")
            }
            page = value
        }
        if let text = parameters["limit"] {
            guard let value = Int(text), (1...Self.maximumLimit).contains(value) else {
                throw APIError(.badRequest, "limit must be an integer from 1 to \(Self.maximumLimit)")
            }
            limit = value
        }
        if let text = parameters["spam"] {
            switch text {
            case "true": spam = true
            case "false": spam = false
            default: throw APIError(.badRequest, "spam must be true or false")
            }
        }
    }
}
