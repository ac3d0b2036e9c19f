import Crypto

/// The pairing token a Bisq phone app shows as a QR code (docs/protocol.md §8):
/// `<magic>|<descriptor>|<key>|<device token>`.
///
/// The key is the secret the desktop encrypts every message with, so a refusal's reason names what is
/// wrong without ever quoting the key.
public struct BisqPairingToken: Sendable, Hashable {
    /// `ios` for magic `iOS`, `ios-sandbox` for `iOSDev`, `android` for `android`.
    public let platform: Platform
    /// The phone's own name for itself (Bisq shows it in its settings).
    public let descriptor: String
    /// 32 printable ASCII characters; their UTF-8 bytes are the AES-256 key.
    public let key: String
    /// The APNs or FCM token, in its §1 stored form.
    public let deviceToken: String

    public init(platform: Platform, descriptor: String, key: String, deviceToken: String) {
        self.platform = platform
        self.descriptor = descriptor
        self.key = key
        self.deviceToken = deviceToken
    }

    /// Parses `text`, throwing `invalidBisqPairing` with the reason it was refused.
    public init(parsing text: String) throws(HeraldError) {
        guard !text.isEmpty else { throw Self.refused("the pairing token is empty") }
        let parts = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4 else {
            throw Self.refused("a pairing token has 4 parts separated by |, this one has \(parts.count)")
        }
        guard let platform = Self.platform(magic: parts[0]) else {
            throw Self.refused("unknown pairing magic (expected iOS, iOSDev or android)")
        }
        let descriptor = parts[1]
        guard !descriptor.isEmpty else { throw Self.refused("the phone descriptor is empty") }
        guard BisqKey.isValid(parts[2]) else {
            throw Self.refused("the key is not 32 printable ASCII characters")
        }
        let token = parts[3]
        switch platform {
        case .ios, .iosSandbox:
            guard token.utf8.count == 64 else { throw Self.refused("an iOS device token is 64 characters") }
            guard DeviceToken.isValid(token, for: platform) else {
                throw Self.refused("an iOS device token is hexadecimal")
            }
        case .android:
            guard token.utf8.count >= 32 else {
                throw Self.refused("an Android device token is at least 32 characters")
            }
            guard DeviceToken.isValid(token, for: .android) else {
                throw Self.refused("an Android device token is at most 4096 characters of [A-Za-z0-9_:-]")
            }
        case .webpush:
            throw Self.refused("Bisq pairs phones, not Web Push subscriptions")
        }
        self.init(
            platform: platform, descriptor: descriptor, key: parts[2],
            deviceToken: DeviceToken.normalized(token, for: platform))
    }

    private static func platform(magic: String) -> Platform? {
        switch magic {
        case "iOS": return .ios
        case "iOSDev": return .iosSandbox
        case "android": return .android
        default: return nil
        }
    }

    private static func refused(_ reason: String) -> HeraldError {
        HeraldError(.invalidBisqPairing, "invalid Bisq pairing token: \(reason)")
    }
}

/// The 32-character key shared by a Bisq phone and its desktop.
public enum BisqKey {
    public static let length = 32

    /// 32 printable ASCII characters, so that its UTF-8 bytes are exactly an AES-256 key.
    public static func isValid(_ key: String) -> Bool {
        key.utf8.count == length && key.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// `bisq:<first 16 hex of SHA-256 of the key>`: the inbox's name for the messages of one pairing, which
    /// tells pairings apart without revealing the key.
    public static func pseudoWallet(forKey key: String) -> String {
        "bisq:" + String(Hex.encode(SHA256.hash(data: Array(key.utf8))).prefix(16))
    }
}
