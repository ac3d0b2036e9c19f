/// EIP-712 typed structured data, in the standard JSON form wallets sign with `eth_signTypedData_v4`:
/// `{"types": {...}, "primaryType": "...", "domain": {...}, "message": {...}}`.
///
/// Supports the atomic types (`address`, `bool`, `string`, `bytes`, `bytes1`…`bytes32`,
/// `uint8`…`uint256`, `int8`…`int256`), nested structs and arrays (`T[]`, `T[k]`).
public struct TypedData: Sendable, Hashable {
    /// One member of a struct type.
    public struct Field: Sendable, Hashable {
        public let name: String
        public let type: String

        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    public let types: [String: [Field]]
    public let primaryType: String
    public let domain: JSONValue
    public let message: JSONValue

    public init(
        types: [String: [Field]], primaryType: String, domain: JSONValue, message: JSONValue
    ) throws(HeraldError) {
        self.types = types
        self.primaryType = primaryType
        self.domain = domain
        self.message = message
        guard types["EIP712Domain"] != nil else { throw HeraldError(.invalidTypedData, "types has no EIP712Domain") }
        guard types[primaryType] != nil else { throw HeraldError(.invalidTypedData, "primaryType is not among types") }
        for (name, fields) in types {
            guard TypedData.isStructName(name) else {
                throw HeraldError(.invalidTypedData, "bad type name \(name.prefix(64))")
            }
            for field in fields where !isKnownType(field.type) {
                throw HeraldError(.invalidTypedData, "unknown type \(field.type.prefix(64)) in \(name.prefix(64))")
            }
        }
    }

    /// Loads the standard JSON form.
    public init(json: JSONValue) throws(HeraldError) {
        guard case .object(let typeMembers)? = json["types"] else {
            throw HeraldError(.invalidTypedData, "typed data needs a types object")
        }
        var types: [String: [Field]] = [:]
        for (name, definition) in typeMembers {
            guard case .array(let items) = definition else {
                throw HeraldError(.invalidTypedData, "a type definition is an array")
            }
            var fields: [Field] = []
            for item in items {
                guard let fieldName = item["name"]?.stringValue, let fieldType = item["type"]?.stringValue else {
                    throw HeraldError(.invalidTypedData, "a field needs a name and a type")
                }
                fields.append(Field(name: fieldName, type: fieldType))
            }
            types[name] = fields
        }
        guard let primaryType = json["primaryType"]?.stringValue else {
            throw HeraldError(.invalidTypedData, "typed data needs a primaryType string")
        }
        guard let domain = json["domain"], domain.objectMembers != nil else {
            throw HeraldError(.invalidTypedData, "typed data needs a domain object")
        }
        let message = json["message"] ?? .object([])
        try self.init(types: types, primaryType: primaryType, domain: domain, message: message)
    }

    /// Loads the standard JSON form from UTF-8 text.
    public init(jsonText: String) throws(HeraldError) {
        try self.init(json: JSONParser.parse(jsonText))
    }

    /// `Name(type1 name1,…)` followed by every referenced struct type, those sorted by name.
    public func encodeType(_ name: String) throws(HeraldError) -> String {
        guard types[name] != nil else { throw HeraldError(.invalidTypedData, "unknown struct type") }
        var dependencies = Set<String>()
        collectDependencies(of: name, into: &dependencies)
        dependencies.remove(name)
        return ([name] + dependencies.sorted()).map { typeName in
            let fields = types[typeName] ?? []
            return "\(typeName)(" + fields.map { "\($0.type) \($0.name)" }.joined(separator: ",") + ")"
        }.joined()
    }

    /// keccak256(encodeType(name)).
    public func typeHash(_ name: String) throws(HeraldError) -> [UInt8] {
        Keccak256.hash(Array(try encodeType(name).utf8))
    }

    /// keccak256(typeHash ‖ encodeData(value)).
    public func hashStruct(_ name: String, _ value: JSONValue) throws(HeraldError) -> [UInt8] {
        guard let fields = types[name] else { throw HeraldError(.invalidTypedData, "unknown struct type") }
        guard value.objectMembers != nil else {
            throw HeraldError(.invalidTypedData, "a \(name.prefix(64)) value must be an object")
        }
        var hasher = Keccak256()
        hasher.update(try typeHash(name))
        for field in fields {
            guard let member = value[field.name] else {
                throw HeraldError(.invalidTypedData, "\(name.prefix(64)) is missing \(field.name.prefix(64))")
            }
            hasher.update(try encodeField(type: field.type, value: member))
        }
        return hasher.finalize()
    }

    /// hashStruct("EIP712Domain", domain).
    public func domainSeparator() throws(HeraldError) -> [UInt8] {
        try hashStruct("EIP712Domain", domain)
    }

    /// hashStruct(primaryType, message).
    public func messageHash() throws(HeraldError) -> [UInt8] {
        try hashStruct(primaryType, message)
    }

    /// keccak256(0x19 0x01 ‖ domainSeparator ‖ hashStruct(message)): what is signed.
    public func digest() throws(HeraldError) -> [UInt8] {
        var hasher = Keccak256()
        hasher.update([0x19, 0x01])
        hasher.update(try domainSeparator())
        // As eth-account and MetaMask do, a primaryType of EIP712Domain signs the domain alone.
        if primaryType != "EIP712Domain" { hasher.update(try messageHash()) }
        return hasher.finalize()
    }

    /// Signs `digest()`.
    public func sign(with key: PrivateKey) throws(HeraldError) -> RecoverableSignature {
        try key.sign(digest: digest())
    }

    /// The address that produced `signature` over this typed data.
    public func recoverSigner(_ signature: RecoverableSignature) throws(HeraldError) -> EthereumAddress {
        try signature.recoverAddress(digest: digest())
    }

    // MARK: - Encoding of one value

    private func encodeField(type: String, value: JSONValue) throws(HeraldError) -> [UInt8] {
        if let (element, length) = TypedData.arrayElement(of: type) {
            guard case .array(let items) = value else { throw HeraldError(.invalidTypedData, "\(type) needs an array") }
            if let length, items.count != length {
                throw HeraldError(.invalidTypedData, "\(type) needs exactly \(length) items")
            }
            var hasher = Keccak256()
            for item in items { hasher.update(try encodeField(type: element, value: item)) }
            return hasher.finalize()
        }
        if types[type] != nil { return try hashStruct(type, value) }
        return try AtomicEncoder.encode(type: type, value: value)
    }

    private func collectDependencies(of name: String, into found: inout Set<String>) {
        guard types[name] != nil, found.insert(name).inserted else { return }
        for field in types[name] ?? [] {
            collectDependencies(of: TypedData.baseType(field.type), into: &found)
        }
    }

    private func isKnownType(_ type: String) -> Bool {
        let base = TypedData.baseType(type)
        return types[base] != nil || AtomicEncoder.isAtomic(base)
    }

    static func isStructName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic || first == "_" || first == "$"
        else {
            return false
        }
        return name.unicodeScalars.allSatisfy {
            $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "$"
        }
    }

    /// `T` of `T[]…[k]`, with every array suffix removed.
    static func baseType(_ type: String) -> String {
        guard let bracket = type.firstIndex(of: "[") else { return type }
        return String(type[..<bracket])
    }

    /// For `T[]` or `T[k]`: the element type `T` (which may itself be an array) and `k`.
    static func arrayElement(of type: String) -> (String, Int?)? {
        guard type.hasSuffix("]"), let open = type.lastIndex(of: "[") else { return nil }
        let inside = type[type.index(after: open)..<type.index(before: type.endIndex)]
        let element = String(type[..<open])
        if inside.isEmpty { return (element, nil) }
        guard let length = Int(inside), length >= 0 else { return nil }
        return (element, length)
    }
}
