import Foundation

/// How an operation was signed (docs/protocol.md §2).
public enum SignatureScheme: String, Sendable, Hashable, CaseIterable, Codable {
    /// EIP-712 typed data (`eth_signTypedData_v4`).
    case eip712
    /// `personal_sign` of the §2.2 text rendering.
    case eip191
}

/// An envelope as received, before its message is interpreted as a particular operation type:
/// `{"scheme": …, "message": {…}, "signature": "0x…"}`.
public struct RawEnvelope: Sendable, Hashable {
    public let scheme: SignatureScheme
    public let message: JSONValue
    public let signature: String

    /// Parses envelope JSON. Malformed JSON, a duplicated or unknown key, a missing member, an unknown
    /// scheme, a non-object message or a non-string signature are all `bad_request`.
    public static func parse<Bytes: Collection>(_ bytes: Bytes) throws(OperationRejection) -> RawEnvelope
    where Bytes.Element == UInt8 {
        let json: JSONValue
        do { json = try JSONParser.parse(bytes) } catch { throw OperationRejection(.badRequest, error.reason) }
        return try RawEnvelope(json: json)
    }

    public init(json: JSONValue) throws(OperationRejection) {
        guard let members = json.objectMembers else {
            throw OperationRejection(.badRequest, "the body must be a JSON object")
        }
        for member in members where !["scheme", "message", "signature"].contains(member.key) {
            throw OperationRejection(.badRequest, "unknown envelope member \"\(member.key.prefix(64))\"")
        }
        guard let schemeText = json["scheme"]?.stringValue, let scheme = SignatureScheme(rawValue: schemeText) else {
            throw OperationRejection(.badRequest, "scheme must be \"eip712\" or \"eip191\"")
        }
        guard let message = json["message"], message.objectMembers != nil else {
            throw OperationRejection(.badRequest, "message must be a JSON object")
        }
        guard let signature = json["signature"]?.stringValue else {
            throw OperationRejection(.badRequest, "signature must be a string")
        }
        self.scheme = scheme
        self.message = message
        self.signature = signature
    }

    /// Decodes the `Authorization: Herald <base64url(envelope JSON)>` header form (docs/protocol.md §3).
    /// A missing scheme word or unreadable base64 is `unauthorized`.
    public static func parse(authorizationHeader header: String) throws(OperationRejection) -> RawEnvelope {
        let prefix = "Herald "
        guard header.hasPrefix(prefix), let bytes = Base64URL.decode(String(header.dropFirst(prefix.count))) else {
            throw OperationRejection(.unauthorized, "Authorization must be \"Herald <base64url envelope>\"")
        }
        return try parse(bytes)
    }
}

/// A typed, signed operation: what a client builds and sends.
public struct SignedEnvelope<Operation: SignedOperation>: Sendable, Hashable {
    public var scheme: SignatureScheme
    public var operation: Operation
    public var signature: RecoverableSignature

    public init(scheme: SignatureScheme, operation: Operation, signature: RecoverableSignature) {
        self.scheme = scheme
        self.operation = operation
        self.signature = signature
    }

    /// The envelope JSON, members in protocol order.
    public var json: JSONValue {
        .object([
            ("scheme", .string(scheme.rawValue)),
            ("message", operation.messageJSON),
            ("signature", .string(signature.hex)),
        ])
    }

    /// Compact JSON text of ``json``.
    public var jsonText: String { json.jsonText }

    /// `Herald <base64url, no padding, of the envelope JSON>`, for FeedAccess headers.
    public var authorizationHeader: String { "Herald " + Base64URL.encode(Array(jsonText.utf8)) }

    /// The envelope as the server sees it.
    public var raw: RawEnvelope {
        // Built from our own well-formed JSON, so parsing cannot fail; keep the types honest anyway.
        RawEnvelope(trusted: scheme, message: operation.messageJSON, signature: signature.hex)
    }
}

extension RawEnvelope {
    fileprivate init(trusted scheme: SignatureScheme, message: JSONValue, signature: String) {
        self.scheme = scheme
        self.message = message
        self.signature = signature
    }
}

/// Base64 with the URL alphabet and no padding (RFC 4648 §5).
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Accepts the URL alphabet with or without padding; returns nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        guard
            text.utf8.allSatisfy({ byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
                    return true
                default:
                    return false
                }
            })
        else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard = standard.replacingOccurrences(of: "=", with: "")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: standard) else { return nil }
        return Array(data)
    }
}
