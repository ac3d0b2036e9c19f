/// Where a device receives pushes (docs/protocol.md §1).
public enum Platform: String, Sendable, Hashable, CaseIterable, Codable {
    /// APNs production.
    case ios
    /// APNs development (sandbox).
    case iosSandbox = "ios-sandbox"
    /// FCM.
    case android
    /// A Web Push subscription (docs/protocol.md §9): the "token" is the endpoint URL. Bound by a
    /// WebPushBinding, never by a DeviceBinding.
    case webpush

    public var isApple: Bool { self == .ios || self == .iosSandbox }

    /// The platforms a DeviceBinding may name.
    public static let deviceTokenPlatforms: [Platform] = [.ios, .iosSandbox, .android]
}

/// Device token rules of docs/protocol.md §1.
public enum DeviceToken {
    /// Whether `token` is well-formed for `platform`. Lengths count characters (all ASCII when valid).
    public static func isValid(_ token: String, for platform: Platform) -> Bool {
        let utf8 = token.utf8
        switch platform {
        case .ios, .iosSandbox:
            return (64...200).contains(utf8.count) && utf8.count % 2 == 0 && utf8.allSatisfy { Hex.nibble($0) != nil }
        case .android:
            return (32...4096).contains(utf8.count)
                && utf8.allSatisfy { byte in
                    switch byte {
                    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"):
                        return true
                    default:
                        return false
                    }
                }
        case .webpush:
            return false
        }
    }

    /// The form stored, compared and output: APNs tokens lowercased, FCM tokens as they are.
    public static func normalized(_ token: String, for platform: Platform) -> String {
        platform.isApple ? token.lowercased() : token
    }

    /// A prefix safe to log: never the whole token. A Web Push token is its endpoint URL, logged by
    /// its origin alone (``WebPushEndpoint/logOrigin(_:)``): its path can be a secret topic.
    public static func logPrefix(_ token: String) -> String {
        if token.hasPrefix("https://") { return WebPushEndpoint.logOrigin(token) }
        return String(token.prefix(8)) + "…"
    }
}
