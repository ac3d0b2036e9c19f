import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// `POST /v1/notifications` (a channel sends) and `GET /v1/users/{wallet}/feeds` (a recipient reads).
struct NotificationController: Sendable {
    let signed: SignedRequests
    let store: any NotificationStore
    let feedAccess: FeedAccessCheck
    let pushWakeup: PushWakeup
    let policy: DeliveryPolicy
    /// Up to 1000 recipients' secrets: larger than other routes' limit.
    let bodyLimit: Int

    init(state: ServerState, feedAccess: FeedAccessCheck) {
        signed = state.signedRequests
        store = state.store
        self.feedAccess = feedAccess
        pushWakeup = state.pushWakeup
        policy = state.configuration.deliveryPolicy
        bodyLimit = state.configuration.http.notificationBodyLimit
    }

    var routes: RouteCollection<HeraldRequestContext> {
        let routes = RouteCollection(context: HeraldRequestContext.self)
        routes.on(RouteTable.notifications) { request, context in try await post(request, context: context) }
        routes.on(RouteTable.feeds) { request, context in try await feeds(request, context: context) }
        routes.on(RouteTable.notificationStatus) { request, context in
            try await status(request, context: context)
        }
        return routes
    }

    /// docs/protocol.md §2.3 then §4.1: the envelope is verified (audience, time, signature) before its payload
    /// is read, so that only an authenticated channel learns anything about payload rules; then the
    /// channel must be known (`forbidden`), then the nonce unspent (`replayed`). `202` is sent once
    /// items, outbox rows and nonce are committed.
    private func post(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let body = try await RequestBody.readJSON(request, limit: bodyLimit)
        let now = signed.clock()
        let verified = try signed.verified(body.readableBytesView, as: NotificationOperation.self, now: now)
        let operation = verified.operation
        let payload: NotificationPayload
        do {
            payload = try NotificationPayload.parse(operation.payload)
        } catch {
            signed.metrics.recordRejection(error.code)
            throw APIError(error)
        }
        let submission = NotificationSubmission(
            channel: operation.channel, publicKey: verified.publicKey, payload: payload, nonce: operation.nonceValue,
            operation: try signed.identity(of: verified),
            nonceRetainedUntil: signed.nonceRetention(expiresAt: operation.expiresAt), now: now,
            epoch: signed.millisecondClock(), policy: policy, signer: verified.signer)
        let outcome = try await StoreCall.run(context) { try await store.submit(submission) }
        switch outcome {
        case .repeated(.accepted(let receipt)):
            // The same send again (docs/protocol.md §11.2): its first answer, and nothing stored or pushed.
            return signed.replay(JSONResponse.make(bytes: Self.acceptedBody(receipt), status: .accepted))
        case .repeated:
            throw APIError(.internal, "a notification's kept answer is not an accepted one")
        case .unknownChannel:
            signed.metrics.recordRejection(.forbidden)
            throw APIError(.forbidden, "\(operation.channel) is not a channel on this server")
        case .notDelegate:
            signed.metrics.recordRejection(.signatureMismatch)
            throw APIError(
                .signatureMismatch,
                "the signature recovers to \(verified.signer), neither \(operation.channel) nor one of its delegates")
        case .replayed:
            signed.metrics.recordRejection(.replayed)
            throw APIError(.replayed, "this nonce was already used by \(verified.signer)")
        case .refusedSetting(let rejection):
            signed.metrics.recordRejection(rejection.code)
            throw APIError(rejection)
        case .broadcastLimited(let retryAfter):
            signed.metrics.recordRejection(.rateLimited)
            signed.metrics.recordBroadcastLimited()
            throw APIError(
                .rateLimited, "\(operation.channel) has sent its broadcasts for now (docs/protocol.md §10)",
                retryAfter: Int(clamping: retryAfter))
        case .accepted(let receipt):
            signed.metrics.recordNotification(type: payload.kind.rawValue, items: receipt.sids.count)
            signed.metrics.recordRecipients(
                filtered: receipt.filtered, muted: receipt.muted, throttled: receipt.throttled.count)
            if receipt.pushes > 0 { pushWakeup.signal() }
            context.logger.info(
                "notification accepted",
                metadata: [
                    "channel": "\(operation.channel)", "type": "\(payload.kind.rawValue)",
                    "recipients": "\(receipt.sids.count)", "spam": "\(receipt.spam)", "pushes": "\(receipt.pushes)",
                    "filtered": "\(receipt.filtered)", "muted": "\(receipt.muted)",
                    "throttled": "\(receipt.throttled.count)",
                ])
            return JSONResponse.make(bytes: Self.acceptedBody(receipt), status: .accepted)
        }
    }

    /// `{"sid":["…",…],"recipients":N,"pushes":M,"filtered":F,"throttled":["0x…",…]}` written straight into bytes: a broadcast to a million
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
        out.append(contentsOf: #","filtered":"#.utf8)
        appendDecimal(Int64(receipt.filtered), to: &out)
        out.append(contentsOf: #","throttled":"#.utf8)
        out.append(contentsOf: JSONValue.array(receipt.throttled.map { .string($0.checksummed) }).jsonBytes)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The decimal digits of an integer (a small String: stored inline, no allocation).
    static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        out.append(contentsOf: String(value).utf8)
    }

    private func feeds(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let wallet = try PathParameter.wallet(context, "wallet")
        _ = try await feedAccess.authorize(request, wallet: wallet, context: context)
        let query = try FeedQuery(request)
        let page = try await StoreCall.run(context) {
            try await store.feed(
                of: wallet, spam: query.spam, limit: query.limit, offset: (query.page - 1) * query.limit)
        }
        let feeds = page.entries.map { entry in
            JSONValue.object([
                ("payload_id", .number(String(entry.notification.sid))), ("sender", .string(entry.sender.checksummed)),
                ("epoch", .string(String(entry.notification.epoch))), ("payload", entry.notification.json),
                ("read", .bool(entry.read)),
            ])
        }
        return JSONResponse.make(
            .object([
                ("feeds", .array(feeds)), ("itemcount", .number(String(page.total))),
                ("unread", .number(String(page.unread))),
            ]))
    }
}

extension NotificationController {
    /// `GET /v1/notifications/{sid}`: the pushes of one item, for the channel that sent it (FeedAccess
    /// signed by the channel wallet) or the delegate that signed it (docs/protocol.md §11.1). Another signer
    /// gets the same `404` as an unknown sid: whether a sid exists is the sender's business only.
    private func status(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        // Any string of digits is a well-formed sid, as the OpenAPI document says; one that cannot
        // exist (0, or past Int64) is simply not found, like any other unknown sid.
        let raw = context.parameters.get("sid") ?? ""
        guard !raw.isEmpty, raw.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw APIError(.badRequest, "sid must be a decimal integer")
        }
        let signer = try await feedAccess.authorizeAnySigner(request, context: context)
        guard let sid = Int64(raw), sid > 0,
            let report = try await StoreCall.run(context, { try await store.pushReport(sid: sid) }),
            report.channel == signer || report.signer == signer
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
                ("signer", .string(report.signer.checksummed)), ("pushes", .array(pushes)),
            ]))
    }
}
