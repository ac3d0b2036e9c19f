/// What a channel sends (docs/protocol.md §4.1), parsed and checked: the exact JSON text of
/// `Notification.payload`.
///
/// ```json
/// { "notification": { "title": "…", "body": "…" },
///   "data": { "type": "3", "asub": "…", "amsg": "…", "acta": "…", "aimg": "…" },
///   "recipients": "0x…" }
/// ```
/// Structure faults are `invalid_payload`, a bad recipient address `invalid_wallet`, a field past
/// its limit `field_too_long`. Lengths count Unicode scalar values. Unknown keys are ignored, so
/// that EPNS-style senders adding fields are not refused.
public struct NotificationPayload: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Broadcast to the channel's subscribers.
        case broadcast = "1"
        /// Secret: per-recipient ECIES secret, fields CryptoJS-encrypted with it.
        case secret = "2"
        /// One recipient.
        case targeted = "3"
        /// A subset of recipients.
        case subset = "4"
    }

    /// One addressee; `secret` (ECIES hex) for type 2 only.
    public struct Recipient: Sendable, Hashable {
        public let wallet: EthereumAddress
        public let secret: String?
    }

    public let kind: Kind
    /// The visible text (discarded for type 2, whose visible text is generic).
    public let title: String
    public let body: String
    public let subject: String
    public let message: String
    public let callToAction: String
    public let image: String
    /// Empty for a broadcast.
    public let recipients: [Recipient]
    /// The channel setting whose choices decide who gets it (docs/protocol.md §10); nil for everyone.
    public let setting: NotificationSetting?
    /// How its pushes are delivered (docs/protocol.md §11.4); empty for the defaults.
    public let push: PushOptions

    public static let maximumRecipients = 1000
    public static let maximumBytes = 448 * 1024

    /// Plaintext limits of §4.1, in Unicode scalars.
    public enum Limit {
        public static let title = 80
        public static let body = 256
        public static let subject = 80
        public static let message = 2048
        public static let callToAction = 255
        public static let image = 255

        /// A CryptoJS-encrypted field whose plaintext may hold `scalars` scalars (each up to 4 UTF-8
        /// bytes, plus the 16-byte header and up to a block of padding), base64-encoded.
        public static func encrypted(_ scalars: Int) -> Int { 4 * ((4 * scalars + 32 + 2) / 3) }
    }

    public static func parse(_ text: String) throws(OperationRejection) -> NotificationPayload {
        guard text.utf8.count <= maximumBytes else {
            throw OperationRejection(.fieldTooLong, "payload is larger than 448 KiB")
        }
        let json: JSONValue
        do { json = try JSONParser.parse(text) } catch {
            throw OperationRejection(.invalidPayload, "payload is not JSON: \(error.reason)")
        }
        guard json.objectMembers != nil, let notification = json["notification"], notification.objectMembers != nil,
            let data = json["data"], data.objectMembers != nil
        else {
            throw OperationRejection(.invalidPayload, "payload needs \"notification\" and \"data\" objects")
        }
        guard let typeText = data["type"]?.stringValue, let kind = Kind(rawValue: typeText) else {
            throw OperationRejection(.invalidPayload, "data.type must be the string \"1\", \"2\", \"3\" or \"4\"")
        }
        guard let title = notification["title"]?.stringValue, let body = notification["body"]?.stringValue else {
            throw OperationRejection(.invalidPayload, "notification.title and notification.body are required strings")
        }
        func field(_ name: String) throws(OperationRejection) -> String {
            guard let value = data[name] else { return "" }
            guard let text = value.stringValue else {
                throw OperationRejection(.invalidPayload, "data.\(name) must be a string")
            }
            return text
        }
        let encrypted = kind == .secret
        func check(_ text: String, _ name: String, _ limit: Int) throws(OperationRejection) {
            let allowed = encrypted && name.hasPrefix("data.") ? Limit.encrypted(limit) : limit
            guard text.unicodeScalars.count <= allowed else {
                throw OperationRejection(.fieldTooLong, "\(name) is longer than \(allowed) characters")
            }
        }
        let subject = try field("asub")
        let message = try field("amsg")
        let callToAction = try field("acta")
        let image = try field("aimg")
        try check(title, "notification.title", Limit.title)
        try check(body, "notification.body", Limit.body)
        try check(subject, "data.asub", Limit.subject)
        try check(message, "data.amsg", Limit.message)
        try check(callToAction, "data.acta", Limit.callToAction)
        try check(image, "data.aimg", Limit.image)
        let recipients = try parseRecipients(json["recipients"], kind: kind)
        let setting = try json["setting"].map { (value) throws(OperationRejection) in
            try NotificationSetting.parse(value)
        }
        let push = try json["push"].map { (value) throws(OperationRejection) in try PushOptions.parse(value) }
        return NotificationPayload(
            kind: kind, title: title, body: body, subject: subject, message: message, callToAction: callToAction,
            image: image, recipients: recipients, setting: setting, push: push ?? PushOptions.none)
    }

    private static func parseRecipients(_ value: JSONValue?, kind: Kind) throws(OperationRejection) -> [Recipient] {
        func address(_ text: String) throws(OperationRejection) -> EthereumAddress {
            do { return try EthereumAddress(parsing: text) } catch {
                throw OperationRejection(.invalidWallet, "recipient \(text.prefix(64)) is not a wallet address")
            }
        }
        switch kind {
        case .broadcast:
            guard value == nil else {
                throw OperationRejection(.invalidPayload, "a type 1 broadcast has no recipients")
            }
            return []
        case .targeted:
            guard let text = value?.stringValue else {
                throw OperationRejection(.invalidPayload, "a type 3 payload has one recipient address string")
            }
            return [Recipient(wallet: try address(text), secret: nil)]
        case .subset, .secret:
            guard let members = value?.objectMembers, !members.isEmpty else {
                throw OperationRejection(
                    .invalidPayload, "a type \(kind.rawValue) payload has a non-empty recipients object")
            }
            guard members.count <= maximumRecipients else {
                throw OperationRejection(.invalidPayload, "at most \(maximumRecipients) recipients")
            }
            var seen = Set<EthereumAddress>()
            var recipients: [Recipient] = []
            for (key, entry) in members {
                let wallet = try address(key)
                guard seen.insert(wallet).inserted else {
                    throw OperationRejection(.invalidPayload, "recipient \(wallet) is listed twice")
                }
                if kind == .subset {
                    guard entry == .null else {
                        throw OperationRejection(.invalidPayload, "type 4 recipients map to null")
                    }
                    recipients.append(Recipient(wallet: wallet, secret: nil))
                } else {
                    guard let secret = entry["secret"]?.stringValue, isSecretHex(secret) else {
                        throw OperationRejection(
                            .invalidPayload,
                            "type 2 recipient \(wallet) needs {\"secret\": ECIES hex} (docs/protocol.md §5.1)")
                    }
                    recipients.append(Recipient(wallet: wallet, secret: secret))
                }
            }
            return recipients
        }
    }

    /// ECIES wire form: lowercase or uppercase hex of iv(16) ‖ key(33) ‖ mac(32) ‖ ≥ one block.
    private static func isSecretHex(_ text: String) -> Bool {
        let count = text.utf8.count
        return count >= 2 * (81 + 16) && count <= 2048 && count % 32 == (2 * 81) % 32
            && text.utf8.allSatisfy { Hex.nibble($0) != nil }
    }
}
