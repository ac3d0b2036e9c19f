import GRDB
public import HeraldCore
public import HeraldStore

extension SQLiteHeraldStore {
    public func apply(_ change: ChannelSettingsChange) async throws -> ChannelSettingsOutcome {
        try await control(.channelSettings(change)) { $0.channelSettings }
    }

    public func apply(_ change: SubscriberSettingsChange) async throws -> SubscriberSettingsOutcome {
        try await control(.subscriberSettings(change)) { $0.subscriberSettings }
    }

    public func apply(_ change: MuteChange) async throws -> MuteOutcome {
        try await control(.mute(change)) { $0.mute }
    }

    public func apply(_ change: ReadMarkChange) async throws -> ReadMarkOutcome {
        try await control(.readMark(change)) { $0.readMark }
    }

    public func channelSettings(of channel: EthereumAddress) async throws -> ChannelSettingsList? {
        try await read { db in try SubscriberControlReads.settings(of: channel, in: db) }
    }

    private func control<Outcome: Sendable>(
        _ write: SubscriberControlWrite, _ outcome: @Sendable (SubscriberControlOutcome) -> Outcome?
    ) async throws -> Outcome {
        guard case .control(let answer) = try await writer.submit(.control(write)), let value = outcome(answer)
        else { throw StoreError("the writer answered a §10 operation with another kind of outcome") }
        return value
    }
}
