import HeraldCore
public import HeraldStore

/// The push bodies Bisq's phone apps read (PROTOCOL §8). The encrypted message goes in as it came, never
/// parsed: only the phone holds its key.
public enum BisqPushBody {
    /// APNs keeps an undelivered Bisq push this long (Bisq's own relay asks for four weeks).
    public static let apnsExpirySeconds: Int64 = 28 * 86_400

    /// `{"aps":{"alert":{"loc-key":"notification"},"content-available":1[,"sound":"default"]
    /// [,"mutable-content":1]},"encrypted":"<message>"}`.
    public static func apns(_ content: BisqRelayContent) -> [UInt8] {
        var aps: [(key: String, value: JSONValue)] = [
            ("alert", .object([("loc-key", .string("notification"))])), ("content-available", .number("1")),
        ]
        if content.urgent { aps.append(("sound", .string("default"))) }
        if content.mutableContent { aps.append(("mutable-content", .number("1"))) }
        return JSONValue.object([("aps", .object(aps)), ("encrypted", .string(content.message))]).jsonBytes
    }

    /// 10 for a push that should sound, 5 (delivered when convenient for the battery) otherwise.
    public static func apnsPriority(_ content: BisqRelayContent) -> String { content.urgent ? "10" : "5" }

    /// `{"message":{"token","data":{"encrypted"},"android":{"priority":"high"|"normal"}}}`.
    public static func fcm(_ content: BisqRelayContent, token: String) -> [UInt8] {
        let message = JSONValue.object([
            ("token", .string(token)), ("data", .object([("encrypted", .string(content.message))])),
            ("android", .object([("priority", .string(content.urgent ? "high" : "normal"))])),
        ])
        return JSONValue.object([("message", message)]).jsonBytes
    }
}
