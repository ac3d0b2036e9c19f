/// The shape of one operation type: its EIP-712 name and fields in signing order, with the type hash
/// computed once.
public struct OperationSchema: Sendable {
    public let primaryType: String
    public let fields: [OperationFieldSpec]
    /// `Name(type name,…)`
    public let encodeType: String
    /// keccak256(encodeType)
    public let typeHash: [UInt8]
    /// Per field: whether its values recur across operations (an action, a platform, the audience), so
    /// that their hashes are worth remembering (`RecurringWordHashes`).
    let recurring: [Bool]

    /// Fields whose few values come back in operation after operation.
    static let recurringFieldNames: Set<String> = ["action", "platform", "audience"]

    public init(primaryType: String, fields: [OperationFieldSpec]) {
        self.primaryType = primaryType
        self.fields = fields
        encodeType = primaryType + "(" + fields.map { "\($0.kind.rawValue) \($0.name)" }.joined(separator: ",") + ")"
        typeHash = Keccak256.hash(encodeType.utf8)
        recurring = fields.map { $0.kind == .string && Self.recurringFieldNames.contains($0.name) }
    }

    /// Reads `message` (a JSON object) into typed field values by docs/protocol.md §2's rules: exactly the
    /// fields of the type (`bad_request` otherwise), strings as strings, addresses in any wallet form
    /// (`invalid_wallet`), `uint256` as canonical decimal strings (or JSON integers where allowed).
    public func decode(_ message: JSONValue) throws(OperationRejection) -> DecodedFields {
        guard let members = message.objectMembers else {
            throw OperationRejection(.badRequest, "message must be a JSON object")
        }
        // By position in the schema: a handful of fields, so a scan beats hashing every name twice.
        var values = [OperationField?](repeating: nil, count: fields.count)
        for (key, value) in members {
            guard let position = fields.firstIndex(where: { $0.name == key }) else {
                throw OperationRejection(.badRequest, "unknown field \"\(key.prefix(64))\" in \(primaryType)")
            }
            values[position] = try decodeValue(value, spec: fields[position])
        }
        var decoded: [(name: String, value: OperationField)] = []
        decoded.reserveCapacity(fields.count)
        for (spec, value) in zip(fields, values) {
            guard let value else { throw OperationRejection(.badRequest, "\(primaryType) is missing \"\(spec.name)\"") }
            decoded.append((spec.name, value))
        }
        return DecodedFields(fields: decoded)
    }

    private func decodeValue(_ value: JSONValue, spec: OperationFieldSpec) throws(OperationRejection) -> OperationField
    {
        switch spec.kind {
        case .string:
            guard let text = value.stringValue else {
                throw OperationRejection(.badRequest, "\"\(spec.name)\" must be a string")
            }
            return .string(text)
        case .address:
            guard let text = value.stringValue else {
                throw OperationRejection(.badRequest, "\"\(spec.name)\" must be an address string")
            }
            do {
                return .address(try EthereumAddress(parsing: text))
            } catch {
                throw OperationRejection(
                    .invalidWallet, "\"\(spec.name)\" is not a valid wallet address: \(error.reason)")
            }
        case .uint256:
            let digits: String
            switch value {
            case .string(let text): digits = text
            case .number(let text) where spec.acceptsJSONInteger: digits = text
            default:
                throw OperationRejection(.badRequest, "\"\(spec.name)\" must be a string of decimal digits")
            }
            guard let number = UInt256(decimal: digits, canonical: true) else {
                throw OperationRejection(
                    .badRequest, "\"\(spec.name)\" must be decimal digits without leading zeros, below 2^256")
            }
            return .uint256(number)
        }
    }
}

/// Field values read by ``OperationSchema/decode(_:)``, present and of the declared kind.
public struct DecodedFields: Sendable {
    let fields: [(name: String, value: OperationField)]

    public init(values: [String: OperationField]) { fields = values.map { ($0.key, $0.value) } }

    init(fields: [(name: String, value: OperationField)]) { self.fields = fields }

    private subscript(name: String) -> OperationField? { fields.first { $0.name == name }?.value }

    public func string(_ name: String) throws(OperationRejection) -> String {
        guard case .string(let text)? = self[name] else { throw missing(name) }
        return text
    }

    public func address(_ name: String) throws(OperationRejection) -> EthereumAddress {
        guard case .address(let address)? = self[name] else { throw missing(name) }
        return address
    }

    public func uint256(_ name: String) throws(OperationRejection) -> UInt256 {
        guard case .uint256(let value)? = self[name] else { throw missing(name) }
        return value
    }

    private func missing(_ name: String) -> OperationRejection {
        OperationRejection(.badRequest, "missing or mistyped field \"\(name)\"")
    }
}
