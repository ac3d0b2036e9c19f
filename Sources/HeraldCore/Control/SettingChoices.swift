/// A subscriber's choices as a SubscriberSettings signs them (docs/protocol.md §10): the JSON text of an
/// object `{"<id>": true|false|<int>, …}`. Step 1 checks only that it is an object; what each id and value
/// must be depends on the channel's list, read in the operation's transaction (``resolved(against:)``).
public struct SettingChoices: Sendable, Hashable {
    /// The members in the order sent (the parser refuses a duplicated key).
    public let members: [Member]

    public struct Member: Sendable, Hashable {
        public let id: String
        public let value: JSONValue
    }

    public init(members: [Member]) { self.members = members }

    public static func parse(_ text: String) throws(OperationRejection) -> SettingChoices {
        let json: JSONValue
        do { json = try JSONParser.parse(text) } catch {
            throw OperationRejection(.invalidSettings, "settings is not JSON: \(error.reason)")
        }
        guard let members = json.objectMembers else {
            throw OperationRejection(.invalidSettings, "settings must be a JSON object of choices")
        }
        return SettingChoices(members: members.map { Member(id: $0.key, value: $0.value) })
    }

    /// The choices as stored values (a toggle's 1 or 0, a threshold's integer), each checked against the
    /// channel's list: an id that is no setting, a value of the other kind or outside [min, max] is
    /// `invalid_settings`.
    public func resolved(against list: ChannelSettingsList) throws(OperationRejection) -> [String: Int64] {
        var values: [String: Int64] = [:]
        for member in members {
            guard let setting = list[member.id] else {
                throw OperationRejection(
                    .invalidSettings, "\"\(member.id.prefix(32))\" is not a setting of this channel")
            }
            switch (setting.kind, member.value) {
            case (.toggle, .bool(let on)):
                values[member.id] = on ? 1 : 0
            case (.threshold(let min, let max, _), let json):
                guard let value = SettingInteger.parse(json), value >= min, value <= max else {
                    throw OperationRejection(
                        .invalidSettings, "\"\(member.id)\" takes an integer from \(min) to \(max)")
                }
                values[member.id] = value
            case (.toggle, _):
                throw OperationRejection(.invalidSettings, "\"\(member.id)\" is a toggle: true or false")
            }
        }
        return values
    }
}

/// The setting a notification names (docs/protocol.md §4.1, §10): `{"id":"<toggle id>"}` or
/// `{"id":"<threshold id>","value":<int>}`. Its form is checked with the payload; whether it fits the
/// channel's list is decided in the send's transaction (``passingValues(in:)``).
public struct NotificationSetting: Sendable, Hashable {
    public let id: String
    /// Present for a threshold.
    public let value: Int64?

    public init(id: String, value: Int64?) {
        self.id = id
        self.value = value
    }

    static func parse(_ json: JSONValue) throws(OperationRejection) -> NotificationSetting {
        guard let members = json.objectMembers, let id = json["id"]?.stringValue else {
            throw OperationRejection(
                .invalidPayload, "setting must be {\"id\": …} or {\"id\": …, \"value\": <integer>}")
        }
        if let other = members.first(where: { $0.key != "id" && $0.key != "value" }) {
            throw OperationRejection(.invalidPayload, "setting has an unknown key \"\(other.key.prefix(32))\"")
        }
        guard let raw = json["value"] else { return NotificationSetting(id: id, value: nil) }
        guard let value = SettingInteger.parse(raw) else {
            throw OperationRejection(.invalidPayload, "setting.value must be an integer of at most 2^53")
        }
        return NotificationSetting(id: id, value: value)
    }

    /// The stored choices that let a recipient through: a toggle's 1 (on), a threshold's values up to the
    /// notification's `value` (a subscriber asking for 5 or more gets a notification of 7; equal passes).
    /// `invalid_payload` when the channel has no such setting, or the value does not fit its kind.
    public func passingValues(in list: ChannelSettingsList) throws(OperationRejection) -> ClosedRange<Int64> {
        guard let setting = list[id] else {
            throw OperationRejection(.invalidPayload, "setting \"\(id.prefix(32))\" is not a setting of this channel")
        }
        switch (setting.kind, value) {
        case (.toggle, nil): return 1...1
        case (.toggle, _?):
            throw OperationRejection(.invalidPayload, "setting \"\(id)\" is a toggle: no value")
        case (.threshold, let value?): return Int64.min...value
        case (.threshold, nil):
            throw OperationRejection(.invalidPayload, "setting \"\(id)\" is a threshold: it needs an integer value")
        }
    }
}
