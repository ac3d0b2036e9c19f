/// The three EIP-712 types Herald's operations use, with their values.
public enum OperationField: Sendable, Hashable {
    case string(String)
    case address(EthereumAddress)
    case uint256(UInt256)

    /// The EIP-712 type name.
    public var typeName: String {
        switch self {
        case .string: return "string"
        case .address: return "address"
        case .uint256: return "uint256"
        }
    }

    /// EIP-712 `encodeData` of this value: one 32-byte word. A string's hash is remembered when its
    /// field's values are `recurring` across operations.
    func encoded(recurring: Bool) -> [UInt8] {
        switch self {
        case .string(let text): return recurring ? RecurringWordHashes.shared.keccak(text) : Keccak256.hash(text.utf8)
        case .address(let address): return [UInt8](repeating: 0, count: 12) + address.bytes
        case .uint256(let value): return value.bigEndianBytes
        }
    }

    /// The docs/protocol.md §2.2 rendering: addresses EIP-55, integers decimal, strings as sent.
    var rendered: String {
        switch self {
        case .string(let text): return text
        case .address(let address): return address.checksummed
        case .uint256(let value): return value.description
        }
    }

    /// The JSON form an envelope carries: strings, EIP-55 addresses, decimal strings.
    var json: JSONValue {
        switch self {
        case .string(let text): return .string(text)
        case .address(let address): return .string(address.checksummed)
        case .uint256(let value): return .string(value.description)
        }
    }
}

/// A field of an operation type: its name and EIP-712 type.
public struct OperationFieldSpec: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case string, address, uint256
    }

    public let name: String
    public let kind: Kind
    /// `issuedAt`/`expiresAt` may travel as JSON integers as well as decimal strings (docs/protocol.md §2).
    public let acceptsJSONInteger: Bool

    public init(_ name: String, _ kind: Kind, acceptsJSONInteger: Bool = false) {
        self.name = name
        self.kind = kind
        self.acceptsJSONInteger = acceptsJSONInteger
    }
}
