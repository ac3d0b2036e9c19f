import Foundation
import HeraldCore
import HeraldStore

/// Keys, changes and notifications shared by every store test, whatever the backend.
enum Fixtures {
    static let key = try! PrivateKey(hex: "0x107be946709e41b7895eea9f2dacf998a0a9124acbb786f0fd1a826101581a07")
    /// A second wallet, and the channel of the notification tests.
    static let other = try! PrivateKey(hex: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")

    static func change(
        _ action: DeviceChange.Action = .register, key: PrivateKey = key,
        token: String = String(repeating: "ab", count: 32), platform: Platform = .ios, nonce: UInt64,
        now: Int64 = 1_000, retainedUntil: Int64 = 2_000, max: Int = 20, confirm: Bool = false
    ) -> DeviceChange {
        DeviceChange(
            action: action, wallet: key.address, platform: platform, deviceToken: token, publicKey: key.publicKey,
            nonce: UInt256(nonce), operation: .random(), nonceRetainedUntil: retainedUntil, now: now,
            maxBindingsPerWallet: max,
            queueSetupConfirmation: confirm)
    }

    static func token(_ index: Int) -> String { String(format: "%064x", index) }

    /// A wallet per index, for subscribers.
    static func subscriber(_ index: Int) -> PrivateKey {
        try! PrivateKey(bytes: Array(repeating: 0, count: 30) + [UInt8((index + 1) >> 8), UInt8((index + 1) & 0xff)])
    }

    static func subscription(
        _ action: SubscriptionChange.Action = .subscribe, channel: EthereumAddress = other.address,
        key: PrivateKey, nonce: UInt64, now: Int64 = 900
    ) -> SubscriptionChange {
        SubscriptionChange(
            action: action, channel: channel, subscriber: key.address, publicKey: key.publicKey,
            nonce: UInt256(nonce), operation: .random(), nonceRetainedUntil: 10_000, now: now)
    }

    /// A notification from `other`, the channel of these tests.
    static func submission(
        _ payload: String, nonce: UInt64, epoch: Int64 = 5_000, now: Int64 = 1_000,
        policy: DeliveryPolicy = DeliveryPolicy()
    ) throws -> NotificationSubmission {
        NotificationSubmission(
            channel: other.address, publicKey: other.publicKey, payload: try NotificationPayload.parse(payload),
            nonce: UInt256(nonce), operation: .random(), nonceRetainedUntil: 4_000_000_000, now: now, epoch: epoch,
            policy: policy)
    }

    /// A notification from `other` signed by `signer` (a delegate, or a stranger claiming to be one).
    static func submission(
        _ payload: String, signedBy signer: PrivateKey, nonce: UInt64
    ) throws -> NotificationSubmission {
        NotificationSubmission(
            channel: other.address, publicKey: signer.publicKey, payload: try NotificationPayload.parse(payload),
            nonce: UInt256(nonce), operation: .random(), nonceRetainedUntil: 4_000_000_000, now: 1_000, epoch: 5_000,
            signer: signer.address)
    }

    /// The channel `other` adds or removes `delegate`.
    static func delegate(
        _ action: DelegateUpdate.Action, _ delegate: EthereumAddress, channel: PrivateKey = other, nonce: UInt64
    ) -> DelegateChange {
        DelegateChange(
            channel: channel.address, delegate: delegate, action: action, signed: signed(channel, nonce: nonce))
    }

    /// What a §10 change of `key` carries.
    static func signed(_ key: PrivateKey, nonce: UInt64, now: Int64 = 1_000) -> SignedChange {
        SignedChange(
            publicKey: key.publicKey, nonce: UInt256(nonce), operation: .random(), nonceRetainedUntil: 10_000, now: now)
    }

    /// The channel `other` publishes `json` (a settings list).
    static func channelSettings(_ json: String, nonce: UInt64) throws -> ChannelSettingsChange {
        ChannelSettingsChange(
            channel: other.address, list: try ChannelSettingsList.parse(json), signed: signed(other, nonce: nonce))
    }

    static func choices(_ json: String, of key: PrivateKey, nonce: UInt64) throws -> SubscriberSettingsChange {
        SubscriberSettingsChange(
            channel: other.address, subscriber: key.address, choices: try SettingChoices.parse(json),
            signed: signed(key, nonce: nonce))
    }

    static func mute(_ key: PrivateKey, until: Int64, nonce: UInt64, now: Int64 = 1_000) -> MuteChange {
        MuteChange(
            channel: other.address, subscriber: key.address, until: until, signed: signed(key, nonce: nonce, now: now))
    }

    static func readMark(
        _ key: PrivateKey, sids: [Int64] = [], upTo: Int64 = 0, nonce: UInt64, policy: DeliveryPolicy = DeliveryPolicy()
    ) -> ReadMarkChange {
        ReadMarkChange(wallet: key.address, sids: sids, upTo: upTo, signed: signed(key, nonce: nonce), policy: policy)
    }

    /// The channel `other` ("Desk") with `count` subscribers, each with one iOS binding.
    static func seed(_ store: any HeraldStore, subscribers count: Int) async throws {
        try await store.saveChannel(
            ChannelRecord(address: other.address, name: "Desk", icon: "i", url: "u", createdAt: 1))
        for index in 0..<count {
            let key = subscriber(index)
            _ = try await store.apply(subscription(key: key, nonce: 1))
            _ = try await store.apply(change(key: key, token: token(index), nonce: 2))
        }
    }
}
