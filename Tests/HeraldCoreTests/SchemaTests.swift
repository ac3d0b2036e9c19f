import Foundation
import HeraldCore
import Testing

/// `Schemas/json/` documents the wire formats for other clients; it must name exactly the fields,
/// in the order, that HeraldCore signs.
@Suite struct SchemaTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Schemas/json")

    static func properties(_ name: String) throws -> (names: [String], required: [String]) {
        let schema = try JSONParser.parse(Array(try Data(contentsOf: folder.appendingPathComponent(name + ".json"))))
        let names = try #require(schema["properties"]?.objectMembers).map(\.key)
        guard case .array(let required)? = schema["required"] else { return (names, []) }
        return (names, required.compactMap(\.stringValue))
    }

    @Test func operationSchemasMatchTheSignedFields() throws {
        let specs: [(String, OperationSchema)] = [
            ("DeviceBinding", DeviceBinding.schema), ("Subscription", Subscription.schema),
            ("Notification", NotificationOperation.schema), ("FeedAccess", FeedAccess.schema),
            ("WebPushBinding", WebPushBinding.schema),
        ]
        for (file, schema) in specs {
            let (names, required) = try Self.properties(file)
            #expect(names == schema.fields.map(\.name), "\(file)")
            #expect(required == schema.fields.map(\.name), "\(file)")
            #expect(schema.primaryType == file)
        }
    }

    @Test func errorSchemaListsEveryCode() throws {
        let schema = try JSONParser.parse(Array(try Data(contentsOf: Self.folder.appendingPathComponent("Error.json"))))
        guard case .array(let codes)? = schema["properties"]?["error"]?["properties"]?["code"]?["enum"] else {
            Issue.record("Error.json has no code enum")
            return
        }
        #expect(Set(codes.compactMap(\.stringValue)) == Set(APIErrorCode.allCases.map(\.rawValue)))
    }
}
