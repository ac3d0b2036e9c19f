import Foundation
import Hummingbird
import Testing

@testable import HeraldServer

/// The router and `DeviceRouteFastPath` apply one request policy: the router's middleware is the
/// policy's and nothing else (a middleware added to `makeRouter` beside the policy would skip the
/// fast path's route), and every stage has a place in the fast path.
@Suite struct RequestPolicyTests {
    /// The type names of a router's middleware, outermost first, read from Hummingbird's group (its
    /// list is internal, so through `Mirror`).
    static func middlewareTypes(of router: Router<HeraldRequestContext>) -> [String] {
        let group = Mirror(reflecting: router.middlewares)
        let list = group.children.first { $0.label == "middlewares" }?.value
        let items = list.map { Mirror(reflecting: $0).children.map(\.value) } ?? []
        return items.map { String(describing: type(of: $0)) }
    }

    static func typeNames(_ middleware: [RequestPolicy.Middleware]) -> [String] {
        middleware.map { String(describing: type(of: $0)) }
    }

    @Test(arguments: [0.0, 50.0])
    func theRoutersMiddlewareIsThePolicysAndNothingElse(rateLimit: Double) throws {
        let fixture = try ServerFixture { $0.http.rateLimit = rateLimit }
        defer { try? FileManager.default.removeItem(atPath: fixture.folder) }
        let router = HeraldServerApp.makeRouter(fixture.state)
        let expected = Self.typeNames(RequestPolicy(state: fixture.state).routerMiddleware)
        let found = Self.middlewareTypes(of: router)
        #expect(!found.isEmpty, "Hummingbird's middleware list could not be read")
        #expect(found == expected)
        #expect(found.contains("RateLimitMiddleware") == (rateLimit > 0))
        // Every middleware of the router belongs to a stage the fast path applies.
        #expect(found.allSatisfy { name in Self.knownRouterStages[name] != nil }, "\(found)")
    }

    /// The router middleware each stage is; a middleware type missing here fails the test above.
    static let knownRouterStages: [String: RequestStage] = [
        "ObservabilityMiddleware": .metrics, "ErrorMiddleware": .errorBody, "NULRefusalMiddleware": .nulRefusal,
        "RateLimitMiddleware": .rateLimit,
    ]

    @Test func theRouterStagesComeInThePolicysOrder() throws {
        let fixture = try ServerFixture { $0.http.rateLimit = 50 }
        defer { try? FileManager.default.removeItem(atPath: fixture.folder) }
        let stages = Self.middlewareTypes(of: HeraldServerApp.makeRouter(fixture.state)).compactMap {
            Self.knownRouterStages[$0]
        }
        #expect(stages == RequestPolicy.stages.filter(stages.contains))
        #expect(stages == [.metrics, .errorBody, .nulRefusal, .rateLimit])
    }

    /// The checks that refuse a request before its body is read run on the fast path's head, in the
    /// policy's order: the rate limit before the declared length, as in the router.
    @Test func theFastPathRefusesOnTheHeadInThePolicysOrder() {
        let onHead = RequestPolicy.stages.filter { DeviceRouteFastPath.step(for: $0) == .onHead }
        #expect(onHead == [.nulRefusal, .rateLimit, .bodyLimits])
        #expect(DeviceRouteFastPath.step(for: .connectionGuard) == .beforeThisHandler)
        #expect(DeviceRouteFastPath.step(for: .mediaType) == .onBody)
        #expect([.metrics, .errorBody, .headers].allSatisfy { DeviceRouteFastPath.step(for: $0) == .onAnswer })
    }
}
