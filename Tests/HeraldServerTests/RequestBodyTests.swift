import Testing

@testable import HeraldServer

/// The media types `POST` bodies are accepted with (docs/protocol.md §3: JSON, UTF-8 or no charset).
struct RequestBodyTests {
    @Test(arguments: [
        "application/json", "Application/JSON", "application/json; charset=utf-8", "application/json;charset=UTF-8",
        "application/json; charset=\"utf-8\"", " application/json ",
    ])
    func jsonIsAccepted(_ contentType: String) {
        #expect(RequestBody.isJSON(contentType))
    }

    @Test(arguments: [
        nil, "", "text/plain", "application/jsonx", "application/json; charset=latin1", "application/json; boundary=x",
        "application/json; charset", "application/x-www-form-urlencoded",
    ])
    func anythingElseIsRefused(_ contentType: String?) {
        #expect(!RequestBody.isJSON(contentType))
    }
}
