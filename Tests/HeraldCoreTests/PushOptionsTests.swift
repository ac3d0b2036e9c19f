import HeraldCore
import Testing

/// docs/protocol.md §11.4's `push` object in a notification payload: every key optional, anything else
/// `invalid_payload`.
@Suite struct PushOptionsTests {
    static func payload(_ push: String) -> String {
        #"{"notification":{"title":"t","body":"b"},"data":{"type":"1"},"push":\#(push)}"#
    }

    @Test func everyKeyIsOptionalAndReadAsGiven() throws {
        let full = try NotificationPayload.parse(
            Self.payload(#"{"priority":"normal","ttl":0,"collapseId":"order-9_A"}"#))
        #expect(full.push.priority == .normal && full.push.timeToLive == 0 && full.push.collapseID == "order-9_A")
        #expect(try NotificationPayload.parse(Self.payload("{}")).push.isEmpty)
        let none = try NotificationPayload.parse(#"{"notification":{"title":"t","body":"b"},"data":{"type":"1"}}"#)
        #expect(none.push == .none)
        let longest = try NotificationPayload.parse(Self.payload(#"{"ttl":2419200}"#))
        #expect(longest.push.timeToLive == PushOptions.maximumTimeToLive)
    }

    @Test(arguments: [
        #"[]"#, #""high""#, #"{"priority":"urgent"}"#, #"{"priority":10}"#, #"{"ttl":-1}"#, #"{"ttl":2419201}"#,
        #"{"ttl":"60"}"#, #"{"ttl":1.5}"#, #"{"collapseId":""}"#, #"{"collapseId":"has space"}"#,
        #"{"collapseId":"abcdefghijklmnopqrstuvwxyz0123456"}"#, #"{"collapseId":7}"#, #"{"sound":"default"}"#,
    ])
    func anythingElseIsInvalidPayload(_ push: String) {
        #expect(throws: OperationRejection.self) { try NotificationPayload.parse(Self.payload(push)) }
        do {
            _ = try NotificationPayload.parse(Self.payload(push))
        } catch {
            #expect(error.code == .invalidPayload, "\(push): \(error.code)")
        }
    }

    /// What `herald send` adds is what the parser reads back.
    @Test func aDraftCarriesTheOptions() throws {
        let options = try PushOptions(priority: .high, timeToLive: 60, collapseID: "c")
        let text = NotificationDraft.payload(
            NotificationDraft(title: "t", body: "b").broadcastPayload(), pushing: options)
        #expect(try NotificationPayload.parse(text).push == options)
        #expect(text.hasSuffix(#","push":{"priority":"high","ttl":60,"collapseId":"c"}}"#))
        let plain = NotificationDraft(title: "t", body: "b").broadcastPayload()
        #expect(NotificationDraft.payload(plain, pushing: .none) == plain)
    }
}
