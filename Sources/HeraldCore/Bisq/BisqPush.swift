/// Where the encrypted Bisq message sits in a push as the phone receives it (docs/protocol.md §8).
public enum BisqPush {
    /// The `encrypted` string of an APNs body (`{"aps":…,"encrypted"}`), an FCM request
    /// (`{"message":{"data":{"encrypted"}}}`) or FCM's delivered data (`{"data":{"encrypted"}}`).
    public static func encryptedMessage(in json: JSONValue) throws(HeraldError) -> String {
        let candidates = [json["encrypted"], json["data"]?["encrypted"], json["message"]?["data"]?["encrypted"]]
        for case .some(let value) in candidates {
            guard let text = value.stringValue else { throw BisqMessage.invalid("encrypted is not a string") }
            return text
        }
        throw BisqMessage.invalid("not a Bisq push: no encrypted member in the APNs or FCM shape")
    }
}
