import HeraldCore
import Testing

@Suite struct EIP712Tests {
    @Test func everyVectorHashesSignsAndRecovers() throws {
        let cases = try Vectors.cases("eip712")
        #expect(cases.count == 6)
        for item in cases {
            let name = try item.string("name")
            let typed = try TypedData(json: try #require(item["typedData"]))
            #expect(
                Hex.encode(try typed.domainSeparator(), prefix: true) == (try item.string("domainSeparator")), "\(name)"
            )
            #expect(Hex.encode(try typed.messageHash(), prefix: true) == (try item.string("structHash")), "\(name)")
            #expect(Hex.encode(try typed.digest(), prefix: true) == (try item.string("digest")), "\(name)")
            let key = try PrivateKey(hex: try item.string("privateKey"))
            #expect(try typed.sign(with: key).hex == (try item.string("signature")), "\(name)")
            let signature = try RecoverableSignature(hex: try item.string("signature"))
            #expect(try typed.recoverSigner(signature).checksummed == (try item.string("address")), "\(name)")
        }
    }

    @Test func mailEncodeTypeListsReferencedTypesSorted() throws {
        let mail = try #require(try Vectors.cases("eip712").first { $0["name"]?.stringValue == "mail" })
        let typed = try TypedData(json: try #require(mail["typedData"]))
        #expect(
            try typed.encodeType("Mail")
                == "Mail(Person from,Person to,string contents)Person(string name,address wallet)")
    }

    @Test func heraldOperationsHashLikeTheGeneralEncoder() throws {
        for item in try Vectors.cases("eip712") {
            let typedJSON = try #require(item["typedData"])
            let primary = try #require(typedJSON["primaryType"]?.stringValue)
            guard primary != "Mail" else { continue }
            let message = Self.withNumbersAsStrings(
                try #require(typedJSON["message"]), except: ["issuedAt", "expiresAt"])
            guard case .number(let chain)? = typedJSON["domain"]?["chainId"], let chainId = UInt256(decimal: chain)
            else {
                Issue.record("vector domain has no chainId")
                continue
            }
            let domain = HeraldDomain(chainId: chainId)
            let digest: [UInt8]
            let typedDataDigest: [UInt8]
            switch primary {
            case "DeviceBinding":
                let op = try DeviceBinding(message: message)
                (digest, typedDataDigest) = (op.eip712Digest(domain: domain), try op.typedData(domain: domain).digest())
            case "Subscription":
                let op = try Subscription(message: message)
                (digest, typedDataDigest) = (op.eip712Digest(domain: domain), try op.typedData(domain: domain).digest())
            case "Notification":
                let op = try NotificationOperation(message: message)
                (digest, typedDataDigest) = (op.eip712Digest(domain: domain), try op.typedData(domain: domain).digest())
            case "FeedAccess":
                let op = try FeedAccess(message: message)
                (digest, typedDataDigest) = (op.eip712Digest(domain: domain), try op.typedData(domain: domain).digest())
            default:
                Issue.record("unexpected primary type \(primary)")
                continue
            }
            #expect(Hex.encode(digest, prefix: true) == (try item.string("digest")), "\(primary)")
            #expect(typedDataDigest == digest, "\(primary)")
        }
    }

    @Test func atomicTypesAndArraysEncode() throws {
        let json = """
            {"types":{"EIP712Domain":[{"name":"name","type":"string"}],
              "T":[{"name":"a","type":"bool"},{"name":"b","type":"bytes"},{"name":"c","type":"bytes4"},
                   {"name":"d","type":"uint8"},{"name":"e","type":"int256"},{"name":"f","type":"string[]"},
                   {"name":"g","type":"uint256[2]"}]},
             "primaryType":"T","domain":{"name":"x"},
             "message":{"a":true,"b":"0x0102","c":"0xdeadbeef","d":255,"e":"-1","f":["x","y"],"g":[1,"0x02"]}}
            """
        let typed = try TypedData(jsonText: json)
        #expect(try typed.digest().count == 32)
        #expect(try typed.encodeType("T") == "T(bool a,bytes b,bytes4 c,uint8 d,int256 e,string[] f,uint256[2] g)")
    }

    @Test(arguments: [
        #"{"d":256}"#, #"{"d":-1}"#, #"{"d":"x"}"#, #"{"d":1.5}"#, #"{}"#, #"{"d":true}"#,
    ])
    func outOfRangeOrMistypedValuesThrow(_ message: String) throws {
        let json = """
            {"types":{"EIP712Domain":[],"T":[{"name":"d","type":"uint8"}]},"primaryType":"T","domain":{},"message":\(message)}
            """
        let typed = try TypedData(jsonText: json)
        #expect(throws: HeraldError.invalidTypedData) { try typed.digest() }
    }

    @Test func unknownTypesAreRefusedAtLoad() {
        let json = """
            {"types":{"EIP712Domain":[],"T":[{"name":"d","type":"uint7"}]},"primaryType":"T","domain":{},"message":{}}
            """
        #expect(throws: HeraldError.invalidTypedData) { try TypedData(jsonText: json) }
    }

    @Test func int8BoundsAreExact() throws {
        func digest(_ value: String) throws -> [UInt8] {
            try TypedData(
                jsonText: """
                    {"types":{"EIP712Domain":[],"T":[{"name":"v","type":"int8"}]},"primaryType":"T","domain":{},"message":{"v":\(value)}}
                    """
            ).digest()
        }
        _ = try digest("-128")
        _ = try digest("127")
        #expect(throws: HeraldError.invalidTypedData) { try digest("128") }
        #expect(throws: HeraldError.invalidTypedData) { try digest("-129") }
    }

    /// The vectors carry `nonce` as a JSON number (typed-data form); envelopes carry it as a string.
    static func withNumbersAsStrings(_ message: JSONValue, except kept: Set<String>) -> JSONValue {
        guard let members = message.objectMembers else { return message }
        return .object(
            members.map { member in
                if case .number(let text) = member.value, !kept.contains(member.key) {
                    return (member.key, .string(text))
                }
                return member
            })
    }
}
