import HeraldCore
import Testing

@testable import HeraldRelay

/// A push URL's route, parsed whole once per origin, is the route the whole parse gives, whether the origin
/// was seen or not; what the parse refuses stays refused.
struct PushRoutesTests {
    static let urls = [
        "https://api.push.apple.com/3/device/0a1b2c3d",
        "https://api.push.apple.com/3/device/ffee",
        "https://Api.Push.Apple.com:443/3/device/ffee",
        "https://127.0.0.1:8443/3/device/abc?x=1",
        "https://[::1]:9000/v1/projects/p/messages:send",
        "https://fcm.googleapis.com/fcm/send/dAbc-_~:APA91b!$&'()*+,;=@x",
        "https://push.example?topic=a",
        "https://push.example",
        "https://updates.push.services.mozilla.com/wpush/v2/gAAA%41",
    ]

    @Test func aRouteIsWhatTheWholeParseGivesSeenOrNot() throws {
        let routes = PushRoutes()
        for round in 1...2 {
            for url in Self.urls {
                let endpoint = try #require(WebPushEndpoint(url), "\(url)")
                let route = try #require(routes.route(for: url), "round \(round): \(url)")
                #expect(route.path == endpoint.path, "round \(round): \(url)")
                #expect(route.origin.key == endpoint.origin, "round \(round): \(url)")
                #expect(route.origin.target.endpoint.host == endpoint.host)
                #expect(route.origin.target.endpoint.port == endpoint.port)
            }
        }
    }

    /// After an origin was seen, a path the whole parse refuses is still refused.
    @Test func whatTheParseRefusesStaysRefused() {
        let routes = PushRoutes()
        #expect(routes.route(for: "https://api.push.apple.com/3/device/ok") != nil)
        for url in [
            "https://api.push.apple.com/3/device/a#fragment", "https://api.push.apple.com/3/device/a b",
            "https://api.push.apple.com/3/device/é", "http://api.push.apple.com/3/device/a",
            "https://user@api.push.apple.com/3/device/a",
        ] {
            #expect(routes.route(for: url) == nil, "\(url)")
            #expect(WebPushEndpoint(url) == nil, "\(url)")
        }
    }

    @Test func plainPathCharacters() {
        #expect(PushRoutes.isPlain("/3/device/0aF-._~!$&'()*+,;=:@/?q=1"[...].utf8))
        for text in ["/a%20b", "/a b", "/a#b", "/a\"b", "/a<b", "/a{b", "/a|b", "/a\\b", "/é"] {
            #expect(!PushRoutes.isPlain(text[...].utf8), "\(text)")
        }
    }

    /// Origins from clients (Web Push endpoints) cannot grow the table past its capacity.
    @Test func theTableOfOriginsIsBounded() throws {
        let routes = PushRoutes()
        for index in 0..<(PushRoutes.capacity * 2 + 3) {
            let route = try #require(routes.route(for: "https://host\(index).example/p"))
            #expect(route.origin.key == "https://host\(index).example")
        }
        #expect(routes.count <= PushRoutes.capacity)
    }
}
