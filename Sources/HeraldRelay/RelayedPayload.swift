public import HeraldCore

extension PushContent {
    /// A payload that is not a §4.2 push payload (docs/protocol.md §7 answers `invalid_payload`).
    public struct Malformed: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The content of a forwarded §4.2 payload `{"notification":{"title","body"},"data":{…strings…}}`,
    /// shaped under this server's own `push.content`: `none` keeps only the wake-up. `data` must carry
    /// `type`, `sid` and `epoch`, every value a string; a setup confirmation (`type` "setup") is sent
    /// as it is, since it holds nothing of a message.
    public static func relayed(_ payload: JSONValue, mode: Mode) throws(Malformed) -> PushContent {
        guard case .string(let title)? = payload["notification"]?["title"],
            case .string(let body)? = payload["notification"]?["body"]
        else { throw Malformed(description: "payload.notification needs string title and body") }
        guard let members = payload["data"]?.objectMembers else {
            throw Malformed(description: "payload.data must be an object of strings")
        }
        var data: [(key: String, value: String)] = []
        for member in members {
            guard case .string(let value) = member.value else {
                throw Malformed(description: "payload.data.\(member.key) must be a string")
            }
            data.append((key: member.key, value: value))
        }
        let minimal = try ["type", "sid", "epoch"].map { key throws(Malformed) -> (key: String, value: String) in
            guard let value = data.first(where: { $0.key == key })?.value else {
                throw Malformed(description: "payload.data needs \(key)")
            }
            return (key: key, value: value)
        }
        if mode == .none && minimal[0].value != "setup" {
            return PushContent(title: wakeUpTitle, body: wakeUpBody, data: minimal, minimalData: minimal)
        }
        return PushContent(title: title, body: body, data: data, minimalData: minimal)
    }
}
