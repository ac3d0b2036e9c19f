import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging
import NIOCore

/// `POST /v1/devices` (register / unregister) and `GET /v1/users/{wallet}/pubkey`.
enum DeviceRoutes {
    static func register(on router: Router<HeraldRequestContext>, state: ServerState) {
        router.on(RouteTable.devices) { request, context in
            try await postDevice(request, context: context, state: state)
        }
        router.on(RouteTable.publicKey) { _, context in
            try await getPublicKey(context: context, state: state)
        }
    }

    static func postDevice(
        _ request: Request, context: HeraldRequestContext, state: ServerState
    ) async throws -> Response {
        let body = try await RequestBody.readJSON(request, limit: state.configuration.bodyLimit)
        return JSONResponse.make(try await answer(body.readableBytesView, state: state, logger: context.logger))
    }

    /// A verified, applied DeviceBinding's answer. Shared by the route above and by
    /// `DeviceRouteFastPath`, which answers the same request below Hummingbird.
    static func answer(
        _ body: ByteBufferView, state: ServerState, logger: Logger
    ) async throws -> JSONValue {
        let now = state.clock()
        let verified = try state.verified(body, as: DeviceBinding.self, now: now)
        let binding = verified.operation
        let change = DeviceChange(
            action: binding.action == .register ? .register : .unregister, wallet: binding.wallet,
            platform: binding.platform, deviceToken: binding.normalizedDeviceToken, publicKey: verified.publicKey,
            nonce: binding.nonceValue,
            nonceRetainedUntil: state.nonceRetention(expiresAt: binding.expiresAt),
            now: now, maxBindingsPerWallet: state.configuration.maxBindingsPerWallet,
            queueSetupConfirmation: state.configuration.setupConfirmation)
        let status = try await apply(change, state: state, logger: logger)
        logger.debug(
            "device \(status)",
            metadata: [
                "wallet": "\(binding.wallet)", "platform": "\(binding.platform.rawValue)",
                "token": "\(DeviceToken.logPrefix(change.deviceToken))",
            ])
        return .object([
            ("wallet", .string(binding.wallet.checksummed)), ("platform", .string(binding.platform.rawValue)),
            ("deviceToken", .string(change.deviceToken)), ("status", .string(status)),
        ])
    }

    static func getPublicKey(context: HeraldRequestContext, state: ServerState) async throws -> Response {
        let wallet = try PathParameter.wallet(context, "wallet")
        guard let key = try await StoreCall.run(context, { try await state.store.publicKey(of: wallet) }) else {
            throw APIError(.notFound, "no verified signature from \(wallet) yet")
        }
        return JSONResponse.make(.object([("wallet", .string(wallet.checksummed)), ("publicKey", .string(key.hex))]))
    }
}

/// Reading a JSON request body within the limits of PROTOCOL §3: size first (a declared length over
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

    /// Percent-decoding of a path segment (`eip155%3A1%3A0x…`).
    var removingPercentEncoding: String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(Hex.nibbleValue),
                    let low = iterator.next().flatMap(Hex.nibbleValue)
                else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

extension DeviceRoutes {
    /// Applies a verified binding change (a device token's or a Web Push subscription's), counts it,
    /// wakes the push worker for a new binding's setup confirmation, and maps refusals to their §3
    /// errors. Returns the status the answer carries.
    static func apply(
        _ change: DeviceChange, state: ServerState, logger: Logger
    ) async throws -> String {
        switch try await StoreCall.run(logger: logger, { try await state.store.apply(change) }) {
        case .registered(let created):
            state.metrics.recordDeviceChange(created ? "created" : "refreshed")
            if created && change.queueSetupConfirmation { state.pushWakeup.signal([change.platform]) }
            return "registered"
        case .unregistered:
            state.metrics.recordDeviceChange("unregistered")
            return "unregistered"
        case .absent:
            state.metrics.recordDeviceChange("absent")
            return "absent"
        case .replayed:
            state.metrics.recordRejection(.replayed)
            throw APIError(.replayed, "this nonce was already used by \(change.wallet)")
        case .overLimit:
            state.metrics.recordRejection(.forbidden)
            throw APIError(
                .forbidden, "\(change.wallet) already has \(state.configuration.maxBindingsPerWallet) device bindings")
        }
    }
}
