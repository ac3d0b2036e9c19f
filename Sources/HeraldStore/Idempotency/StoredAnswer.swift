import HeraldCore

/// The outcome of an applied operation in the bytes kept beside its spent nonce (docs/protocol.md §11.2),
/// so that the same operation received again is answered what it was answered first. What is kept is the
/// outcome, not the HTTP body: the body is a function of the operation (the same, by its digest) and this
/// outcome, and a broadcast's million sids keep as a few runs of consecutive numbers instead of 12 MB.
package enum StoredAnswer {
    private enum Tag: UInt8 {
        case device = 1, subscription, notification, channelSettings, delegate, subscriberSettings, mute, readMark
        case webhook
    }

    // MARK: Device bindings and subscriptions

    package static func encode(_ outcome: DeviceChangeOutcome) -> [UInt8]? {
        let code: UInt8
        switch outcome {
        case .registered(let created): code = created ? 1 : 0
        case .unregistered: code = 2
        case .absent: code = 3
        case .replayed, .overLimit, .repeated: return nil
        }
        var writer = AnswerWriter(tag: Tag.device.rawValue)
        writer.byte(code)
        return writer.bytes
    }

    package static func device(_ bytes: [UInt8]) throws -> DeviceChangeOutcome {
        try decode(bytes, .device) { reader throws(AnswerDecodingError) in
            switch try reader.byte() {
            case 0: return .registered(created: false)
            case 1: return .registered(created: true)
            case 2: return .unregistered
            case 3: return .absent
            default: throw AnswerDecodingError("an unknown device status")
            }
        }
    }

    package static func encode(_ outcome: SubscriptionChangeOutcome) -> [UInt8]? {
        let code: UInt8
        switch outcome {
        case .subscribed(let created): code = created ? 1 : 0
        case .unsubscribed(let existed): code = existed ? 3 : 2
        case .unknownChannel, .replayed, .repeated: return nil
        }
        var writer = AnswerWriter(tag: Tag.subscription.rawValue)
        writer.byte(code)
        return writer.bytes
    }

    package static func subscription(_ bytes: [UInt8]) throws -> SubscriptionChangeOutcome {
        try decode(bytes, .subscription) { reader throws(AnswerDecodingError) in
            switch try reader.byte() {
            case 0: return .subscribed(created: false)
            case 1: return .subscribed(created: true)
            case 2: return .unsubscribed(existed: false)
            case 3: return .unsubscribed(existed: true)
            default: throw AnswerDecodingError("an unknown subscription status")
            }
        }
    }

    // MARK: Notifications

    /// The sids as runs of consecutive numbers (a broadcast's are one run on SQLite, a few on PostgreSQL),
    /// each run's start as the difference from the previous run's end.
    package static func encode(_ receipt: NotificationReceipt) -> [UInt8] {
        var writer = AnswerWriter(tag: Tag.notification.rawValue)
        let runs = SidRuns(receipt.sids)
        writer.count(runs.runs.count)
        var previous: Int64 = 0
        for run in runs.runs {
            writer.signed(run.start &- previous)
            writer.count(run.count)
            previous = run.start &+ Int64(run.count)
        }
        writer.count(receipt.spam)
        writer.count(receipt.pushes)
        writer.count(receipt.filtered)
        writer.count(receipt.muted)
        writer.count(receipt.throttled.count)
        for address in receipt.throttled { writer.raw(address.bytes) }
        return writer.bytes
    }

    package static func notification(_ bytes: [UInt8]) throws -> NotificationReceipt {
        try decode(bytes, .notification) { reader throws(AnswerDecodingError) in
            let runCount = try reader.count(bytesEach: 2)
            var sids: [Int64] = []
            var previous: Int64 = 0
            for _ in 0..<runCount {
                let start = previous &+ (try reader.signed())
                let count = try reader.integer()
                guard count > 0, count <= 10_000_000 else { throw AnswerDecodingError("a run of sids out of range") }
                sids.append(contentsOf: (0..<Int64(count)).lazy.map { start &+ $0 })
                previous = start &+ Int64(count)
            }
            let spam = try reader.integer()
            let pushes = try reader.integer()
            let filtered = try reader.integer()
            let muted = try reader.integer()
            let throttledCount = try reader.count(bytesEach: 20)
            var throttled: [EthereumAddress] = []
            for _ in 0..<throttledCount {
                let bytes = try reader.data(exactly: 20)
                do { throttled.append(try EthereumAddress(bytes: bytes)) } catch {
                    throw AnswerDecodingError("a throttled address is not 20 bytes")
                }
            }
            return NotificationReceipt(
                sids: sids, spam: spam, pushes: pushes, filtered: filtered, throttled: throttled, muted: muted)
        }
    }

    // MARK: Subscriber control and delegates (docs/protocol.md §10, §11.1)

    package static func encode(_ outcome: SubscriberControlOutcome) -> [UInt8]? {
        switch outcome {
        case .channelSettings(.saved(let list)):
            var writer = AnswerWriter(tag: Tag.channelSettings.rawValue)
            writer.data(Array(list.jsonText.utf8))
            return writer.bytes
        case .delegate(.applied(let status)):
            var writer = AnswerWriter(tag: Tag.delegate.rawValue)
            writer.data(Array(status.rawValue.utf8))
            return writer.bytes
        case .subscriberSettings(.saved(let effective)):
            var writer = AnswerWriter(tag: Tag.subscriberSettings.rawValue)
            writer.data(Array(ChannelSettingsList(effective.map(\.setting)).jsonText.utf8))
            for setting in effective { writer.signed(setting.value) }
            return writer.bytes
        case .mute(.muted(let until)):
            var writer = AnswerWriter(tag: Tag.mute.rawValue)
            writer.signed(until)
            return writer.bytes
        case .webhook(.applied(let status)):
            var writer = AnswerWriter(tag: Tag.webhook.rawValue)
            writer.data(Array(status.rawValue.utf8))
            return writer.bytes
        case .readMark(.marked(let unread, let pushes)):
            var writer = AnswerWriter(tag: Tag.readMark.rawValue)
            writer.count(unread)
            writer.count(pushes)
            return writer.bytes
        default:
            return nil
        }
    }

    package static func control(_ bytes: [UInt8]) throws -> SubscriberControlOutcome {
        guard let first = bytes.first, let tag = Tag(rawValue: first) else {
            throw StoreError(.corrupt, "a kept answer of an unknown kind")
        }
        return try decode(bytes, tag) { reader throws(AnswerDecodingError) in
            switch tag {
            case .channelSettings:
                return .channelSettings(.saved(try settingsList(reader.data())))
            case .delegate:
                guard let status = DelegateStatus(rawValue: String(decoding: try reader.data(), as: UTF8.self)) else {
                    throw AnswerDecodingError("an unknown delegate status")
                }
                return .delegate(.applied(status))
            case .subscriberSettings:
                let list = try settingsList(reader.data())
                var effective: [EffectiveSetting] = []
                for setting in list.settings {
                    effective.append(EffectiveSetting(setting: setting, value: try reader.signed()))
                }
                return .subscriberSettings(.saved(effective))
            case .mute:
                return .mute(.muted(until: try reader.signed()))
            case .readMark:
                return .readMark(.marked(unread: try reader.integer(), pushes: try reader.integer()))
            case .webhook:
                guard let status = WebhookStatus(rawValue: String(decoding: try reader.data(), as: UTF8.self)) else {
                    throw AnswerDecodingError("an unknown webhook status")
                }
                return .webhook(.applied(status))
            case .device, .subscription, .notification:
                throw AnswerDecodingError("a kept answer of another kind")
            }
        }
    }

    private static func settingsList(_ bytes: [UInt8]) throws(AnswerDecodingError) -> ChannelSettingsList {
        do { return try ChannelSettingsList.stored(String(decoding: bytes, as: UTF8.self)) } catch {
            throw AnswerDecodingError("a kept settings list does not parse")
        }
    }

    private static func decode<Outcome>(
        _ bytes: [UInt8], _ tag: Tag, _ body: (inout AnswerReader) throws(AnswerDecodingError) -> Outcome
    ) throws -> Outcome {
        do throws(AnswerDecodingError) {
            var reader = try AnswerReader(bytes, tag: tag.rawValue)
            let outcome = try body(&reader)
            try reader.finish()
            return outcome
        } catch {
            throw StoreError(.corrupt, "a spent nonce's kept answer does not read back: \(error.reason)")
        }
    }
}

/// Sids as runs of consecutive numbers, in their order.
struct SidRuns {
    struct Run {
        let start: Int64
        var count: Int
    }

    private(set) var runs: [Run] = []

    init(_ sids: [Int64]) {
        for sid in sids {
            if let last = runs.last, last.start &+ Int64(last.count) == sid {
                runs[runs.count - 1].count += 1
            } else {
                runs.append(Run(start: sid, count: 1))
            }
        }
    }
}
