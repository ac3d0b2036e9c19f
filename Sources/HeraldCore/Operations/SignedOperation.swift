/// One of Herald's four signed operations (docs/protocol.md §2): DeviceBinding, Subscription, Notification,
/// FeedAccess. Each knows its schema, its field values in signing order and whom it claims as signer.
public protocol SignedOperation: Sendable, Hashable {
    static var schema: OperationSchema { get }

    /// Field values in the order of `schema.fields`.
    var fieldValues: [OperationField] { get }
    /// The address the signature must recover to (or, with `acceptsDelegates`, a delegate of it).
    var claimedSigner: EthereumAddress { get }
    /// Whether a signature by another address passes step 3 of docs/protocol.md §2.3: a Notification's,
    /// which one of the channel's delegates may sign (§11.1). The store decides whether that address is
    /// a current delegate, in the send's own transaction.
    static var acceptsDelegates: Bool { get }
    var audience: String { get }
    /// The replay nonce, for operations that carry one.
    var nonce: UInt256? { get }
    var issuedAt: UInt256 { get }
    var expiresAt: UInt256 { get }

    /// Builds the operation from decoded fields, applying its own rules (known action, platform, token form).
    init(decoded: DecodedFields) throws(OperationRejection)
}

extension SignedOperation {
    public static var primaryType: String { schema.primaryType }

    public static var acceptsDelegates: Bool { false }

    /// Parses and validates a `message` JSON object.
    public init(message: JSONValue) throws(OperationRejection) {
        try self.init(decoded: Self.schema.decode(message))
    }

    /// hashStruct(message): keccak256(typeHash ‖ encodeData(field)…).
    public var structHash: [UInt8] {
        var hasher = Keccak256()
        hasher.update(Self.schema.typeHash)
        for (value, recurring) in zip(fieldValues, Self.schema.recurring) {
            hasher.update(value.encoded(recurring: recurring))
        }
        return hasher.finalize()
    }

    /// The EIP-712 digest in `domain`.
    public func eip712Digest(domain: HeraldDomain) -> [UInt8] {
        var hasher = Keccak256()
        hasher.update([0x19, 0x01])
        hasher.update(domain.separator)
        hasher.update(structHash)
        return hasher.finalize()
    }

    /// The docs/protocol.md §2.2 text: `Herald <Type>`, one `name: value` line per field, then `chainId: N`.
    /// A string holding `\r` or `\n` cannot be rendered (`bad_request`).
    public func eip191Text(chainId: UInt256) throws(OperationRejection) -> String {
        var lines = ["Herald \(Self.primaryType)"]
        for (spec, value) in zip(Self.schema.fields, fieldValues) {
            if case .string(let text) = value, text.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) {
                throw OperationRejection(.badRequest, "\"\(spec.name)\" contains a line break: use the eip712 scheme")
            }
            lines.append("\(spec.name): \(value.rendered)")
        }
        lines.append("chainId: \(chainId)")
        return lines.joined(separator: "\n")
    }

    /// What the signature covers under `scheme`.
    public func digest(scheme: SignatureScheme, domain: HeraldDomain) throws(OperationRejection) -> [UInt8] {
        switch scheme {
        case .eip712: return eip712Digest(domain: domain)
        case .eip191: return PersonalMessage.digest(text: try eip191Text(chainId: domain.chainId))
        }
    }

    /// The `message` object an envelope carries.
    public var messageJSON: JSONValue {
        .object(zip(Self.schema.fields, fieldValues).map { ($0.name, $1.json) })
    }

    /// The operation as standard typed data, for any wallet's `eth_signTypedData_v4`.
    public func typedData(domain: HeraldDomain) throws(HeraldError) -> TypedData {
        let fields = Self.schema.fields.map { TypedData.Field(name: $0.name, type: $0.kind.rawValue) }
        let types = ["EIP712Domain": HeraldDomain.typedDataFields, Self.primaryType: fields]
        let message = JSONValue.object(zip(Self.schema.fields, fieldValues).map { ($0.name, $1.json) })
        return try TypedData(types: types, primaryType: Self.primaryType, domain: domain.json, message: message)
    }

    /// Signs this operation with `key` under `scheme`, giving the envelope to send.
    public func signed(
        with key: PrivateKey, scheme: SignatureScheme, domain: HeraldDomain
    ) throws -> SignedEnvelope<Self> {
        let signature = try key.sign(digest: digest(scheme: scheme, domain: domain))
        return SignedEnvelope(scheme: scheme, operation: self, signature: signature)
    }
}
