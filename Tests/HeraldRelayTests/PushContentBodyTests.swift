import HeraldCore
import HeraldRelay
import Testing

/// The APNs and FCM bodies are written straight into bytes: they must be exactly what the same document
/// built as a `JSONValue` writes, in every shape (badge, thread, escapes, no data, the minimal data).
@Suite struct PushContentBodyTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    static func strings(_ pairs: [(key: String, value: String)]) -> JSONValue {
        .object(pairs.map { (key: $0.key, value: .string($0.value)) })
    }

    static func referenceAPNs(_ content: PushContent, badge: Int?, threadID: String?) -> [UInt8] {
        var aps: [(key: String, value: JSONValue)] = [
            ("alert", .object([("title", .string(content.title)), ("body", .string(content.body))])),
            ("mutable-content", .number("1")), ("sound", .string("default")),
        ]
        if let badge { aps.append(("badge", .number(String(badge)))) }
        if let threadID { aps.append(("thread-id", .string(threadID))) }
        func encoded(_ pairs: [(key: String, value: String)]) -> [UInt8] {
            guard case .object(let data) = strings(pairs) else { return [] }
            return JSONValue.object([("aps", .object(aps))] + data).jsonBytes
        }
        let full = encoded(content.data)
        return full.count > PushContent.maximumBytes ? encoded(content.minimalData) : full
    }

    static func referenceFCM(_ content: PushContent, token: String, android: JSONValue) -> [UInt8] {
        let notification = JSONValue.object([("title", .string(content.title)), ("body", .string(content.body))])
        let measured =
            JSONValue.object([("notification", notification), ("data", strings(content.data))]).jsonBytes.count
        let pairs = measured > PushContent.maximumBytes ? content.minimalData : content.data
        let message = JSONValue.object([
            ("token", .string(token)), ("notification", notification), ("data", strings(pairs)),
            ("android", android),
        ])
        return JSONValue.object([("message", message)]).jsonBytes
    }

    static let contents: [PushContent] = {
        let minimal = [(key: "type", value: "1"), (key: "sid", value: "42"), (key: "epoch", value: "1700000000000")]
        let data = [(key: "type", value: "1"), (key: "app", value: "Ch\"an\\nel\n"), (key: "sid", value: "42")]
        // Just under and just over the limit, with the title and the rest counted in.
        let nearLimit = (3900...4100).map { (key: "amsg", value: String(repeating: "x", count: $0)) }
        return [
            PushContent(title: "Hello", body: "World", data: data, minimalData: minimal),
            PushContent(title: "Quote \" and \\ and\ttab", body: "é ✓ 🚀 \u{1}", data: [], minimalData: []),
            PushContent(title: "", body: "", data: minimal, minimalData: minimal),
        ]
            + nearLimit.map { PushContent(title: "Big", body: "Body", data: [$0] + data, minimalData: minimal) }
    }()

    @Test func theAPNsBodyIsTheReferenceDocumentInEveryShape() {
        var cut = 0
        for content in Self.contents {
            for badge in [nil, 0, 12] {
                for threadID in [nil, "0xAbC\"thread"] {
                    let body = content.apnsBody(badge: badge, threadID: threadID)
                    #expect(Self.text(body) == Self.text(Self.referenceAPNs(content, badge: badge, threadID: threadID)))
                    if body.count < content.data.reduce(0, { $0 + $1.value.utf8.count }) { cut += 1 }
                }
            }
        }
        // The near-limit contents cross the limit: some bodies were cut to the minimal data, some not.
        #expect(cut > 0 && cut < Self.contents.count * 6)
    }

    @Test func theFCMBodyIsTheReferenceDocumentInEveryShape() {
        let android = JSONValue.object([("priority", .string("high")), ("ttl", .string("60s"))])
        var cut = 0
        for content in Self.contents {
            let body = content.fcmBody(token: "tok\"en", android: android)
            #expect(Self.text(body) == Self.text(Self.referenceFCM(content, token: "tok\"en", android: android)))
            if body.count < content.data.reduce(0, { $0 + $1.value.utf8.count }) { cut += 1 }
        }
        #expect(cut > 0 && cut < Self.contents.count)
    }
}
