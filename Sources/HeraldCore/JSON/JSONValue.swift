/// A JSON document as parsed by ``JSONParser``: objects keep their key order and numbers keep their
/// exact text, so a 78-digit `uint256` or a duplicated key is never silently changed.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number exactly as written (already checked against the JSON grammar).
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in document order. ``JSONParser`` refuses duplicate keys.
    case object([(key: String, value: JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .number(let text): hasher.combine(text)
        case .string(let text): hasher.combine(text)
        case .array(let items): hasher.combine(items)
        case .object(let members):
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        }
    }

    /// The value of `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    public var objectMembers: [(key: String, value: JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }
}
