import Testing

@testable import HeraldServer

@Suite struct StringTrimmedTests {
    @Test(arguments: [
        ("  a b \t\r", "a b"), ("", ""), (" \t\r ", ""), ("x", "x"), ("é x  ", "é x"), (" \t日本\r", "日本"),
        ("application/json", "application/json"), (" 👩‍💻 ", "👩‍💻"),
    ])
    func blanksAreTrimmedFromBothEndsOnly(input: String, expected: String) {
        #expect(input.trimmed == expected)
    }
}
