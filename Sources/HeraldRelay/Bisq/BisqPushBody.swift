public import HeraldCore

/// The push bodies Bisq's phone apps read (docs/protocol.md §8). The encrypted message goes in as it came, never
/// parsed: only the phone holds its key.
public enum BisqPushBody {
    /// APNs keeps an undelivered Bisq push this long (Bisq's own relay asks for four weeks).
    public static let apnsExpirySeconds: Int64 = 28 * 86_400

    /// `{"aps":{"alert":{"loc-key":"notification"},"content-available":1[,"sound":"default"]
    /// [,"mutable-content":1]},"encrypted":"<message>"}`.
    public static func apns(_ content: BisqPushContent) -> [UInt8] {
        var aps: [(key: String, value: JSONValue)] = [
            ("alert", .object([("loc-key", .string("notification"))])), ("content-available", .number("1")),
        ]
        if content.urgent { aps.append(("sound", .string("default"))) }
        if content.mutableContent { aps.append(("mutable-content", .number("1"))) }
        return JSONValue.object([("aps", .object(aps)), ("encrypted", .string(content.message))]).jsonBytes
    }

    /// `{"message":{"token","data":{"encrypted"},"android":{…}}}`, `android` as the provider shapes it
    /// (its priority `high` or `normal` by the push's urgency, unless the message sets one).
    public static func fcm(_ content: BisqPushContent, token: String, android: JSONValue) -> [UInt8] {
        let message = JSONValue.object([
            ("token", .string(token)), ("data", .object([("encrypted", .string(content.message))])),
            ("android", android),
        ])
        return JSONValue.object([("message", message)]).jsonBytes
    }
}
