public import Crypto
import Foundation

/// A Web Push subscription as a browser's `PushSubscription.toJSON()` or a UnifiedPush connector
/// hands it over: where to POST, and the keys to encrypt for. docs/protocol.md §9's validation; `p256dh` and
/// `auth` are kept in their unpadded base64url form.
public struct WebPushSubscription: Sendable, Hashable {
    public let endpoint: String
    /// base64url, unpadded, of the 65-byte uncompressed P-256 point.
    public let p256dh: String
    /// base64url, unpadded, of the 16-byte auth secret.
    public let auth: String

    public static let maximumEndpointBytes = 1000

    /// Validates the three fields as sent; `invalid_subscription` names what is wrong (never a key).
    /// An IP-literal host is checked against `policy` (the operator's allowed networks admit a LAN
    /// distributor's address); nil checks the form only.
    public init(
        endpoint: String, p256dh: String, auth: String, policy: WebPushNetworkPolicy? = WebPushNetworkPolicy()
    ) throws(OperationRejection) {
        try Self.validateEndpoint(endpoint, policy: policy)
        guard let point = Self.decodeBase64URL(p256dh), point.count == 65, point.first == 0x04,
            (try? P256.KeyAgreement.PublicKey(x963Representation: point)) != nil
        else {
            throw OperationRejection(
                .invalidSubscription, "p256dh must be base64url of a 65-byte uncompressed P-256 point on the curve")
        }
        guard let secret = Self.decodeBase64URL(auth), secret.count == 16 else {
            throw OperationRejection(.invalidSubscription, "auth must be base64url of exactly 16 bytes")
        }
        self.endpoint = endpoint
        self.p256dh = Base64URL.encode(point)
        self.auth = Base64URL.encode(secret)
    }

    /// Stored keys, read back: trusted to be valid already.
    public init(storedEndpoint: String, p256dh: String, auth: String) {
        endpoint = storedEndpoint
        self.p256dh = p256dh
        self.auth = auth
    }

    /// The subscriber's public key, for encryption.
    public func publicKey() throws(WebPushCipher.Failure) -> P256.KeyAgreement.PublicKey {
        guard let point = Self.decodeBase64URL(p256dh),
            let key = try? P256.KeyAgreement.PublicKey(x963Representation: point)
        else { throw WebPushCipher.Failure("stored p256dh is not a P-256 point") }
        return key
    }

    public func authSecret() throws(WebPushCipher.Failure) -> [UInt8] {
        guard let secret = Self.decodeBase64URL(auth), secret.count == 16 else {
            throw WebPushCipher.Failure("stored auth is not 16 bytes")
        }
        return secret
    }

    /// base64url with optional trailing padding only; nil for anything else. Decoded here, without
    /// Foundation's string rewriting: every push decodes its subscription's two keys.
    public static func decodeBase64URL(_ text: String) -> [UInt8]? {
        var input = Array(text.utf8)
        while input.last == UInt8(ascii: "=") { input.removeLast() }
        guard input.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in input {
            guard let value = sextet(byte) else { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }

    /// An absolute `https://` URL of at most 1000 bytes, without user info or fragment, whose host
    /// is not an IP literal in a refused range. The URL is otherwise kept exactly as given.
    static func validateEndpoint(_ endpoint: String, policy: WebPushNetworkPolicy?) throws(OperationRejection) {
        guard endpoint.utf8.count <= maximumEndpointBytes else {
            throw OperationRejection(.invalidSubscription, "endpoint exceeds \(maximumEndpointBytes) bytes")
        }
        guard let target = WebPushEndpoint(endpoint) else {
            throw OperationRejection(
                .invalidSubscription, "endpoint must be an absolute https:// URL without user info or fragment")
        }
        if let address = target.literalAddress, let range = policy?.refusal(of: address) {
            throw OperationRejection(.invalidSubscription, "endpoint host lies in the refused network \(range)")
        }
    }
}

/// The parts of an endpoint URL that delivery needs: host, port, origin, path. Parsed by RFC 3986's
/// authority rules, so that what is checked is what is connected to. The HTTP/2 push client reads
/// APNs's and FCM's `https://` URLs through it too.
public struct WebPushEndpoint: Sendable, Hashable {
    public let url: String
    /// `https`, or `http` where the caller allowed it (a webhook to the operator's own network, §11.3).
    public let scheme: String
    /// The host as written, without brackets for IPv6.
    public let host: String
    public let port: Int
    /// What follows the authority, query included, as given (`/` when there is nothing): `:path`.
    public let path: String
    /// Canonical bytes when the host is an IP literal (dotted-quad IPv4 or bracketed IPv6).
    public let literalAddress: [UInt8]?

    public init?(_ url: String) { self.init(url, allowingHTTP: false) }

    /// `allowingHTTP`: an `http://` URL parses too (port 80 by default); whether it may be used is the
    /// caller's rule.
    public init?(_ url: String, allowingHTTP: Bool) {
        let scheme = allowingHTTP && url.hasPrefix("http://") ? "http" : "https"
        let prefix = scheme + "://"
        guard url.hasPrefix(prefix), URL(string: url) != nil,
            // Bytes, not Foundation's `contains` of a string (a search through NSString on every push).
            !url.utf8.contains(UInt8(ascii: "#")), url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f })
        else { return nil }
        let rest = url.dropFirst(prefix.count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        guard !authority.isEmpty, !authority.utf8.contains(UInt8(ascii: "@")) else { return nil }
        let host: Substring
        var portText: Substring?
        let literal: [UInt8]?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
            guard host.utf8.contains(UInt8(ascii: ":")), let bytes = IPNetwork.parseAddress(String(host)) else {
                return nil
            }
            literal = bytes
        } else {
            let pieces = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard pieces.count <= 2 else { return nil }
            host = pieces[0]
            portText = pieces.count == 2 ? pieces[1] : nil
            // Only a dotted quad is an IPv4 literal (RFC 3986); `127.1` or `0x7f.1` is a name, checked
            // when it is resolved.
            let quad = host.split(separator: ".", omittingEmptySubsequences: false)
            let isDottedQuad =
                quad.count == 4
                && quad.allSatisfy { part in !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isNumber) }
            literal = isDottedQuad ? IPNetwork.parseAddress(String(host)) : nil
            if isDottedQuad && literal == nil { return nil }
        }
        literalAddress = literal
        guard !host.isEmpty else { return nil }
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isNumber),
                let number = Int(portText), (1...65535).contains(number)
            else { return nil }
            port = number
        } else {
            port = scheme == "http" ? 80 : 443
        }
        self.scheme = scheme
        self.url = url
        self.host = String(host)
        let afterAuthority = rest.dropFirst(authority.count)
        path = afterAuthority.hasPrefix("/") ? String(afterAuthority) : "/" + afterAuthority
    }

    /// RFC 6454 origin, the VAPID `aud`: `https://host`, with `:port` only when not 443.
    public var origin: String {
        let shownHost = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host.lowercased()
        let defaultPort = scheme == "http" ? 80 : 443
        return scheme + "://" + shownHost + (port == defaultPort ? "" : ":\(port)")
    }

    /// What a log may say of an endpoint: its origin, never its path or query. For many UnifiedPush
    /// distributors (ntfy, for one) the path is the topic, and whoever knows it can push to it.
    public static func logOrigin(_ endpoint: String) -> String {
        WebPushEndpoint(endpoint)?.origin ?? "(not an https endpoint)"
    }
}
