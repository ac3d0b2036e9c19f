import HeraldCore
import Testing

/// docs/protocol.md §10's forms: a channel's settings list, a subscriber's choices, the setting a
/// notification names, a Mute's range and a ReadMark's sids.
@Suite struct SubscriberControlTests {
    static let list = """
        [{"id":"trades","kind":"toggle","default":true,"description":"Trade updates"},\
        {"id":"min_usd","kind":"threshold","min":0,"max":1000000,"default":100}]
        """

    func settingsCode(_ text: String) -> APIErrorCode? {
        do {
            _ = try ChannelSettingsList.parse(text)
            return nil
        } catch { return error.code }
    }

    @Test func aListParsesAndRendersEveryKeyOfItsKindInOrder() throws {
        let list = try ChannelSettingsList.parse(Self.list)
        #expect(list.settings.map(\.id) == ["trades", "min_usd"])
        #expect(list["trades"]?.defaultValue == 1 && list["min_usd"]?.allowedValues == 0...1_000_000)
        #expect(
            list.jsonText
                == #"[{"id":"trades","kind":"toggle","default":true,"description":"Trade updates"},"#
                + #"{"id":"min_usd","kind":"threshold","min":0,"max":1000000,"default":100,"description":""}]"#)
        #expect(try ChannelSettingsList.parse("[]").settings.isEmpty)
    }

    @Test(arguments: [
        "{}", "not json", #"[{"id":"a","kind":"toggle"}]"#, #"[{"id":"A","kind":"toggle","default":true}]"#,
        #"[{"id":"","kind":"toggle","default":true}]"#,
        #"[{"id":"a","kind":"toggle","default":true,"extra":1}]"#,
        #"[{"id":"a","kind":"toggle","default":1}]"#,
        #"[{"id":"a","kind":"switch","default":true}]"#,
        #"[{"id":"a","kind":"threshold","min":5,"max":5,"default":5}]"#,
        #"[{"id":"a","kind":"threshold","min":0,"max":5,"default":6}]"#,
        #"[{"id":"a","kind":"threshold","min":0.5,"max":5,"default":1}]"#,
        #"[{"id":"a","kind":"threshold","min":0,"max":1e3,"default":1}]"#,
        #"[{"id":"a","kind":"threshold","min":0,"max":9007199254740993,"default":1}]"#,
        #"[{"id":"a","kind":"threshold","min":0,"max":5,"default":1,"description":5}]"#,
        #"[{"id":"a","kind":"toggle","default":true},{"id":"a","kind":"toggle","default":false}]"#,
    ])
    func aFaultyListIsInvalidSettings(_ text: String) {
        #expect(settingsCode(text) == .invalidSettings, "\(text)")
    }

    @Test func aListHoldsAtMostSixteenSettingsAndEightyCharacterDescriptions() {
        let seventeen = (0..<17).map { #"{"id":"s\#($0)","kind":"toggle","default":true}"# }
        #expect(settingsCode("[" + seventeen.joined(separator: ",") + "]") == .invalidSettings)
        #expect(settingsCode("[" + seventeen.dropLast().joined(separator: ",") + "]") == nil)
        let long = String(repeating: "é", count: 81)
        #expect(settingsCode(#"[{"id":"a","kind":"toggle","default":true,"description":"\#(long)"}]"#) != nil)
        #expect(
            settingsCode(#"[{"id":"a","kind":"toggle","default":true,"description":"\#(long.dropLast())"}]"#) == nil)
        #expect(
            settingsCode(#"[{"id":"a","kind":"threshold","min":-9007199254740992,"max":9007199254740992,"default":0}]"#)
                == nil)
    }

    @Test func choicesAreCheckedAgainstTheChannelsList() throws {
        let list = try ChannelSettingsList.parse(Self.list)
        let good = try SettingChoices.parse(#"{"trades":false,"min_usd":5000}"#)
        #expect(try good.resolved(against: list) == ["trades": 0, "min_usd": 5000])
        #expect(try SettingChoices.parse("{}").resolved(against: list).isEmpty)
        for bad in [
            #"{"other":true}"#, #"{"trades":1}"#, #"{"min_usd":true}"#, #"{"min_usd":-1}"#,
            #"{"min_usd":1000001}"#, #"{"min_usd":5.5}"#, #"{"min_usd":"5"}"#,
        ] {
            #expect(throws: OperationRejection.self, "\(bad)") {
                try SettingChoices.parse(bad).resolved(against: list)
            }
        }
        #expect(throws: OperationRejection(.invalidSettings, "settings must be a JSON object of choices")) {
            try SettingChoices.parse("[]")
        }
    }

    @Test func aNotificationsSettingPassesTogglesOnAndThresholdsAtOrBelowItsValue() throws {
        let list = try ChannelSettingsList.parse(Self.list)
        #expect(try NotificationSetting(id: "trades", value: nil).passingValues(in: list) == 1...1)
        let threshold = try NotificationSetting(id: "min_usd", value: 700).passingValues(in: list)
        #expect(threshold.contains(700) && threshold.contains(0) && !threshold.contains(701))
        for bad in [
            NotificationSetting(id: "trades", value: 1), NotificationSetting(id: "min_usd", value: nil),
            NotificationSetting(id: "nope", value: nil),
        ] {
            #expect(throws: OperationRejection.self) { try bad.passingValues(in: list) }
        }
    }

    @Test func thePayloadCarriesTheSettingsFormOnly() throws {
        func payload(_ setting: String) -> String {
            #"{"notification":{"title":"t","body":"b"},"data":{"type":"1"},"setting":\#(setting)}"#
        }
        #expect(try NotificationPayload.parse(payload(#"{"id":"trades"}"#)).setting?.id == "trades")
        #expect(try NotificationPayload.parse(payload(#"{"id":"min_usd","value":-3}"#)).setting?.value == -3)
        for bad in [#""trades""#, #"{"value":1}"#, #"{"id":"a","value":"1"}"#, #"{"id":"a","other":1}"#] {
            #expect(throws: OperationRejection.self, "\(bad)") { try NotificationPayload.parse(payload(bad)) }
        }
    }

    @Test func aMuteLastsFromNowToTenYears() {
        let now: Int64 = 1_763_769_600
        #expect(Mute.isAllowed(until: 0, now: now))
        #expect(Mute.isAllowed(until: now + 1, now: now))
        #expect(Mute.isAllowed(until: now + Mute.maximumSeconds, now: now))
        #expect(!Mute.isAllowed(until: now, now: now))
        #expect(!Mute.isAllowed(until: now + Mute.maximumSeconds + 1, now: now))
        #expect(!Mute.isAllowed(until: Int64.max, now: now))
    }

    @Test func readMarkSidsAreCanonicalDecimalsJoinedByCommas() throws {
        #expect(try ReadMark.parseSids("") == [])
        #expect(try ReadMark.parseSids("7,12,3") == [7, 12, 3])
        #expect(try ReadMark.parseSids((1...100).map(String.init).joined(separator: ",")).count == 100)
        // Sids past 2^63 − 1 are well-formed and name no item.
        #expect(
            try ReadMark.parseSids("9223372036854775807,9223372036854775808,123456789012345678901234") == [Int64.max])
        for bad in [
            "07", "1, 2", "1,,2", ",1", "1,", "-1", "0", "a", (1...101).map(String.init).joined(separator: ","),
        ] {
            #expect(throws: OperationRejection.self, "\(bad)") { try ReadMark.parseSids(bad) }
        }
        let wallet = try EthereumAddress(parsing: "0x3f243FdacE01Cfd9719f7359c94BA11361f32471")
        #expect(throws: OperationRejection.self) {
            try ReadMark(
                wallet: wallet, sids: "", upTo: UInt256(0), audience: "a", nonce: UInt256(1), issuedAt: UInt256(1),
                expiresAt: UInt256(2))
        }
    }

    @Test func theNewTypesRenderForEIP191InTheirFieldOrder() throws {
        let wallet = try EthereumAddress(parsing: "0x3f243FdacE01Cfd9719f7359c94BA11361f32471")
        let mute = Mute(
            channel: wallet, subscriber: wallet, until: UInt256(100), audience: "https://push.example.org",
            nonce: UInt256(42), issuedAt: UInt256(1), expiresAt: UInt256(2))
        #expect(
            try mute.eip191Text(chainId: UInt256(1))
                == """
                Herald Mute
                channel: 0x3f243FdacE01Cfd9719f7359c94BA11361f32471
                subscriber: 0x3f243FdacE01Cfd9719f7359c94BA11361f32471
                until: 100
                audience: https://push.example.org
                nonce: 42
                issuedAt: 1
                expiresAt: 2
                chainId: 1
                """)
        #expect(
            ChannelSettingsUpdate.schema.encodeType
                == "ChannelSettings(address channel,string settings,string audience,uint256 nonce,uint256 issuedAt,uint256 expiresAt)"
        )
        #expect(
            SubscriberSettingsUpdate.schema.encodeType
                == "SubscriberSettings(address channel,address subscriber,string settings,string audience,uint256 nonce,uint256 issuedAt,uint256 expiresAt)"
        )
        #expect(
            ReadMark.schema.encodeType
                == "ReadMark(address wallet,string sids,uint256 upTo,string audience,uint256 nonce,uint256 issuedAt,uint256 expiresAt)"
        )
    }
}
