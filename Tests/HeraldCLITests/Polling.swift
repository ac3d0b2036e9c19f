import Foundation

/// Polls until `condition` holds (at most `seconds`), for the end-to-end tests that wait on other
/// processes (a fake receiving pushes, an outbox draining). Returns whether it held: the caller
/// asserts, so a slow machine only waits longer, and a real failure still fails.
func eventually(_ seconds: Double = 15, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(100))
    }
    return try await condition()
}
