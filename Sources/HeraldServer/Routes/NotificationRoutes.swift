import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// `POST /v1/notifications` (a channel sends) and `GET /v1/users/{wallet}/feeds` (a recipient reads).
enum NotificationRoutes {
    static func register(on router: Router<HeraldRequestContext>, state: ServerState) {
        router.on(RouteTable.notifications) { request, context in
            try await postNotification(request, context: context, state: state)
        }
        router.on(RouteTable.feeds) { request, context in
            try await getFeeds(request, context: context, state: state)
        }
        router.on(RouteTable.notificationStatus) { request, context in
            try await getStatus(request, context: context, state: state)
        }
    }

    /// PROTOCOL §2.3 then §4.1: the envelope is verified (audience, time, signature) before its payload
    /// is read, so that only an authenticated channel learns anything about payload rules; then the
    /// channel must be known (`forbidden`), then the nonce unspent (`replayed`). `202` is sent once
    /// items, outbox rows and nonce are committed.
    static func postNotification(
        _ request: Request, context: HeraldRequestContext, state: ServerState
    ) async throws -> Response {
        let body = try await RequestBody.readJSON(request, limit: state.configuration.notificationBodyLimit)
        let now = state.clock()
        let verified = try state.verified(body.readableBytesView, as: NotificationOperation.self, now: now)
        let operation = verified.operation
        let payload: NotificationPayload
        do {
            payload = try NotificationPayload.parse(operation.payload)
        } catch {
            state.metrics.recordRejection(error.code)
            throw APIError(error)
        }
        let submission = NotificationSubmission(
            channel: operation.channel, publicKey: verified.publicKey, payload: payload, nonce: operation.nonceValue,
            nonceRetainedUntil: state.nonceRetention(expiresAt: operation.expiresAt), now: now,
            epoch: state.millisecondClock())
        let outcome = try await StoreCall.run(context) { try await state.store.submit(submission) }
        switch outcome {
        case .unknownChannel:
            state.metrics.recordRejection(.forbidden)
            throw APIError(.forbidden, "\(operation.channel) is not a channel on this server")
        case .replayed:
            state.metrics.recordRejection(.replayed)
            throw APIError(.replayed, "this nonce was already used by \(operation.channel)")
        case .accepted(let receipt):
            state.metrics.recordNotification(type: payload.kind.rawValue, items: receipt.sids.count)
            if receipt.pushes > 0 { state.pushWakeup.signal() }
            context.logger.info(
                "notification accepted",
                metadata: [
                    "channel": "\(operation.channel)", "type": "\(payload.kind.rawValue)",
                    "recipients": "\(receipt.sids.count)", "spam": "\(receipt.spam)", "pushes": "\(receipt.pushes)",
                ])
            return JSONResponse.make(bytes: acceptedBody(receipt), status: .accepted)
        }
    }

    /// `{"sid":["…",…],"recipients":N,"pushes":M}` written straight into bytes: a broadcast to a million
    /// subscribers answers with a million sids, and a JSON value per sid cost more than the broadcast's
    /// own commit.
    static func acceptedBody(_ receipt: NotificationReceipt) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + receipt.sids.count * 12)
        out.append(contentsOf: #"{"sid":["#.utf8)
        for (index, sid) in receipt.sids.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            appendDecimal(sid, to: &out)
            out.append(UInt8(ascii: "\""))
        }
        out.append(contentsOf: #"],"recipients":"#.utf8)
        appendDecimal(Int64(receipt.sids.count), to: &out)
        out.append(contentsOf: #","pushes":"#.utf8)
        appendDecimal(Int64(receipt.pushes), to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The decimal digits of an integer (a small String: stored inline, no allocation).
    static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        out.append(contentsOf: String(value).utf8)
    }

    static func getFeeds(_ request: Request, context: HeraldRequestContext, state: ServerState) async throws -> Response
    {
        let wallet = try PathParameter.wallet(context, "wallet")
        _ = try await FeedAccessCheck.authorize(request, wallet: wallet, context: context, state: state)
        let query = try FeedQuery(request)
        let page = try await StoreCall.run(context) {
            try await state.store.feed(
                of: wallet, spam: query.spam, limit: query.limit, offset: (query.page - 1) * query.limit)
        }
        let feeds = page.entries.map { entry in
            JSONValue.object([
                ("payload_id", .number(String(entry.notification.sid))), ("sender", .string(entry.sender.checksummed)),
                ("epoch", .string(String(entry.notification.epoch))), ("payload", entry.notification.json),
            ])
        }
        return JSONResponse.make(.object([("feeds", .array(feeds)), ("itemcount", .number(String(page.total)))]))
    }
}

extension NotificationRoutes {
    /// `GET /v1/notifications/{sid}`: the pushes of one item, for the channel that sent it (FeedAccess
    /// signed by the channel wallet). Another signer gets the same `404` as an unknown sid: whether a sid
    /// exists is the sender's business only.
    static func getStatus(
        _ request: Request, context: HeraldRequestContext, state: ServerState
    ) async throws
        -> Response
    {
        // Any string of digits is a well-formed sid, as the OpenAPI document says; one that cannot
        // exist (0, or past Int64) is simply not found, like any other unknown sid.
        let raw = context.parameters.get("sid") ?? ""
        guard !raw.isEmpty, raw.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw APIError(.badRequest, "sid must be a decimal integer")
        }
        let signer = try await FeedAccessCheck.authorizeAnySigner(request, context: context, state: state)
        guard let sid = Int64(raw), sid > 0,
            let report = try await StoreCall.run(context, { try await state.store.pushReport(sid: sid) }),
            report.channel == signer
        else {
            throw APIError(.notFound, "no notification \(raw.prefix(24)) sent by \(signer)")
        }
        let pushes = report.pushes.map { push in
            JSONValue.object([
                ("platform", .string(push.platform.rawValue)), ("status", .string(push.status)),
                ("attempts", .number(String(push.attempts))),
                ("lastError", push.lastError.map { .string($0) } ?? .null),
            ])
        }
        return JSONResponse.make(
            .object([
                ("sid", .string(String(sid))), ("recipient", .string(report.recipient.checksummed)),
                ("pushes", .array(pushes)),
            ]))
    }
}

/// `?page=1&limit=10&spam=false` (PROTOCOL §3): `page` ≥ 1, 1 ≤ `limit` ≤ 100, `spam` true or false;
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
