/// A channel's message before it becomes the §4.1 `payload` text of a Notification: what `herald send`
/// and any embedding app compose. Type 2 encrypts here, on the sender's side, so that the server and
/// the push services only ever see ciphertext.
public struct NotificationDraft: Sendable, Hashable {
    public var title: String
    public var body: String
    public var subject: String
    public var message: String
    public var callToAction: String
    public var image: String

    /// `subject` and `message` (what an inbox shows: the cache keeps no title or body) default to the
    /// title and body.
    public init(
        title: String, body: String, subject: String? = nil, message: String? = nil, callToAction: String = "",
        image: String = ""
    ) {
        self.title = title
        self.body = body
        self.subject = subject ?? title
        self.message = message ?? body
        self.callToAction = callToAction
        self.image = image
    }

    /// The visible text a type 2 is sent with. The server replaces it with its own generic text anyway
    /// (§4.2); the sender's never carries the message.
    public static let secretNotice = ("You have a secret message", "Open Herald to read it.")

    /// Type 1: to every subscriber of the channel.
    public func broadcastPayload() -> String {
        payload(kind: .broadcast, fields: plainFields, recipients: nil)
    }

    /// Type 3 for one recipient, type 4 for several (each at most once).
    public func targetedPayload(to recipients: [EthereumAddress]) -> String {
        let unique = Self.unique(recipients)
        if unique.count == 1, let only = unique.first {
            return payload(kind: .targeted, fields: plainFields, recipients: .string(only.checksummed))
        }
        let members = unique.map { (key: $0.checksummed, value: JSONValue.null) }
        return payload(kind: .subset, fields: plainFields, recipients: .object(members))
    }

    /// Type 2: `secret` (15 characters from a CSPRNG unless given) encrypts each field (CryptoJS AES,
    /// §5.2) and is itself encrypted to each recipient's public key (ECIES, §5.1). A key that does not
    /// hash to its address is refused: encrypting to it would hand the message to someone else.
    public func secretPayload(
        to recipients: [(address: EthereumAddress, publicKey: PublicKey)],
        secret: String = SecureRandom.alphanumericString(length: 15)
    ) throws(HeraldError) -> String {
        var members: [(key: String, value: JSONValue)] = []
        var seen = Set<EthereumAddress>()
        for recipient in recipients where seen.insert(recipient.address).inserted {
            guard recipient.publicKey.address == recipient.address else {
                throw HeraldError(
                    .invalidPublicKey, "the public key given for \(recipient.address) belongs to another address")
            }
            let sealed = try ECIES.encrypt(text: secret, to: recipient.publicKey)
            members.append((recipient.address.checksummed, .object([("secret", .string(sealed))])))
        }
        func seal(_ text: String) throws(HeraldError) -> String {
            text.isEmpty ? "" : try CryptoJSAES.encrypt(text, passphrase: secret)
        }
        let fields = (
            title: Self.secretNotice.0, body: Self.secretNotice.1, subject: try seal(subject),
            message: try seal(message), callToAction: try seal(callToAction), image: try seal(image)
        )
        return payload(kind: .secret, fields: fields, recipients: .object(members))
    }

    /// A payload text with docs/protocol.md §10's top-level `setting` added: `setting` is the JSON text of
    /// `{"id":"<toggle>"}` or `{"id":"<threshold>","value":N}`. The payload is a JSON object, so its last
    /// byte is the closing brace.
    public static func payload(_ payload: String, naming setting: String) -> String {
        adding("setting", setting, to: payload)
    }

    /// A payload text with docs/protocol.md §11.4's top-level `push` added (nothing when `options` is empty).
    public static func payload(_ payload: String, pushing options: PushOptions) -> String {
        guard let json = options.json else { return payload }
        return adding("push", json.jsonText, to: payload)
    }

    /// The object `payload` with one more top-level member, `key` holding the JSON text `value`.
    private static func adding(_ key: String, _ value: String, to payload: String) -> String {
        String(payload.dropLast()) + ",\"" + key + "\":" + value + "}"
    }

    private typealias Fields = (
        title: String, body: String, subject: String, message: String, callToAction: String, image: String
    )

    private var plainFields: Fields {
        (title, body, subject, message, callToAction, image)
    }

    private func payload(kind: NotificationPayload.Kind, fields: Fields, recipients: JSONValue?) -> String {
        var members: [(key: String, value: JSONValue)] = [
            ("notification", .object([("title", .string(fields.title)), ("body", .string(fields.body))])),
            (
                "data",
                .object([
                    ("type", .string(kind.rawValue)), ("asub", .string(fields.subject)),
                    ("amsg", .string(fields.message)), ("acta", .string(fields.callToAction)),
                    ("aimg", .string(fields.image)),
                ])
            ),
        ]
        if let recipients { members.append(("recipients", recipients)) }
        return JSONValue.object(members).jsonText
    }

    private static func unique(_ addresses: [EthereumAddress]) -> [EthereumAddress] {
        var seen = Set<EthereumAddress>()
        return addresses.filter { seen.insert($0).inserted }
    }
}
