import HeraldCore

/// What a Web Push carries before encryption (docs/protocol.md §9): the §4.2 payload as compact UTF-8 JSON,
/// `{"notification":{"title","body"},"data":{…strings…}}`, with `data` cut to `{type, sid, epoch}` when
/// the whole would pass 3993 bytes (what one 4096-byte aes128gcm record holds).
public enum WebPushPlaintext {
    public static func bytes(_ content: PushContent) -> [UInt8] {
        func encoded(_ pairs: [(key: String, value: String)]) -> [UInt8] {
            JSONValue.object([
                ("notification", .object([("title", .string(content.title)), ("body", .string(content.body))])),
                ("data", .object(PushContent.object(pairs))),
            ]).jsonBytes
        }
        let full = encoded(content.data)
        return full.count > WebPushCipher.maximumPlaintext ? encoded(content.minimalData) : full
    }

    /// `Urgency` (RFC 8030 §5.3): `high` for a message to one wallet or a few (types 2, 3, 4),
    /// `normal` for a broadcast (type 1) and the setup confirmation.
    public static func urgency(_ content: PushContent) -> String {
        let type = content.minimalData.first { $0.key == "type" }?.value
        return ["2", "3", "4"].contains(type ?? "") ? "high" : "normal"
    }
}
