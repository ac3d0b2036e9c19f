import Foundation
import HeraldServer
import Testing
import Yams

/// `Schemas/openapi.yaml` is the contract other clients build against: it must list exactly the
/// routes the server answers, and every route it lists must answer.
@Suite struct OpenAPIAgreementTests {
    static var document: [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Schemas/openapi.yaml")
        let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        return ((try? Yams.load(yaml: text)) as? [String: Any]) ?? [:]
    }

    static var documentedRoutes: Set<String> {
        let paths = document["paths"] as? [String: Any] ?? [:]
        var routes = Set<String>()
        for (path, item) in paths {
            for method in (item as? [String: Any] ?? [:]).keys
            where ["get", "post", "put", "delete", "patch", "head", "options"].contains(method) {
                routes.insert("\(method.uppercased()) \(path)")
            }
        }
        return routes
    }

    @Test func theDocumentIsOpenAPI31() {
        #expect((Self.document["openapi"] as? String)?.hasPrefix("3.1") == true)
    }

    @Test func documentedRoutesEqualServedRoutes() {
        let served = Set(RouteTable.all.map { "\($0.method.rawValue) \($0.path)" })
        #expect(!served.isEmpty)
        #expect(Self.documentedRoutes == served)
    }

    @Test func everyDocumentedErrorStatusIsOneTheServerUses() {
        let paths = Self.document["paths"] as? [String: Any] ?? [:]
        let known: Set<String> = [
            "200", "202", "400", "401", "403", "404", "405", "409", "413", "415", "429", "500", "503",
        ]
        for (path, item) in paths {
            for (method, operation) in item as? [String: Any] ?? [:] {
                let responses = (operation as? [String: Any])?["responses"] as? [String: Any] ?? [:]
                #expect(!responses.isEmpty, "\(method) \(path) documents no responses")
                for status in responses.keys {
                    #expect(known.contains(status), "\(method) \(path) documents \(status)")
                }
            }
        }
    }
}
