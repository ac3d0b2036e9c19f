#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 network (`10.0.0.0/8`, `fe80::/10`; a bare address is a /32 or /128). Addresses
/// are compared in their canonical form: an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is the
/// IPv4 address it maps, so that no refused IPv4 range can be reached through its IPv6 spelling.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    public let address: [UInt8]
    public let prefixLength: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let first = parts.first, let bytes = IPNetwork.parseAddress(String(first)) else {
            return nil
        }
        let spelledBits = first.contains(":") ? 128 : 32
        var length = spelledBits
        if parts.count == 2 {
            guard parts[1].allSatisfy(\.isASCII), let given = Int(parts[1]), (0...spelledBits).contains(given) else {
                return nil
            }
            length = given
        }
        // A mapped IPv6 network (::ffff:10.0.0.0/104) becomes the IPv4 network it covers.
        if bytes.count == 4 && spelledBits == 128 {
            guard length >= 96 else { return nil }
            length -= 96
        }
        address = bytes
        prefixLength = length
    }

    public var description: String { "\(IPNetwork.format(address))/\(prefixLength)" }

    /// Whether `candidate` (canonical bytes, as ``parseAddress(_:)`` returns) lies in this network.
    public func contains(_ candidate: [UInt8]) -> Bool {
        guard candidate.count == address.count else { return false }
        var remaining = prefixLength
        for (a, b) in zip(address, candidate) where remaining > 0 {
            let take = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if a & mask != b & mask { return false }
            remaining -= take
        }
        return true
    }

    /// Dotted-quad IPv4 or IPv6 text (no brackets) as bytes: 4 for IPv4 and IPv4-mapped IPv6, 16
    /// for other IPv6. Nil for anything else, so a name never parses as an address.
    public static func parseAddress(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return Array(bytes[12...])
        }
        return bytes
    }

    public static func format(_ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil
        }
        guard ok else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// docs/protocol.md §9: the networks a Web Push endpoint may not reach unless the operator allows them
/// (`webpush.allowNetworks`): this host, private, shared, link-local, multicast and reserved space,
/// also when an IPv6 address embeds an IPv4 address of those (IPv4-compatible, NAT64, 6to4), since a
/// DNS64 gateway or a 6to4 relay would carry the connection to that IPv4 address.
public struct WebPushNetworkPolicy: Sendable, Hashable {
    public static let refusedRanges: [IPNetwork] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4", "::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8",
        // Site-local (deprecated, still routed inside some networks) and local-use NAT64 (RFC 8215),
        // whose translation is the operator's own: refused whole, whatever they embed.
        "fec0::/10", "64:ff9b:1::/48",
    ].compactMap(IPNetwork.init)

    /// IPv6 forms that carry an IPv4 address, with the byte offset of the 4 bytes they carry.
    /// IPv4-mapped `::ffff:0:0/96` is absent: ``IPNetwork/parseAddress(_:)`` already makes it IPv4.
    static let embeddingForms: [(network: IPNetwork, offset: Int)] = [
        ("::/96", 12),  // IPv4-compatible: the last 32 bits (`::` and `::1` are refused above first).
        ("64:ff9b::/96", 12),  // NAT64 well-known prefix (RFC 6052): the last 32 bits.
        ("2002::/16", 2),  // 6to4 (RFC 3056): bits 16–47.
    ].compactMap { form in IPNetwork(form.0).map { (network: $0, offset: form.1) } }

    public let allowed: [IPNetwork]

    public init(allowed: [IPNetwork] = []) { self.allowed = allowed }

    /// Nil when `address` (canonical bytes) may be reached; otherwise the refused range it lies in
    /// (for an embedding form, the IPv4 range of the address it embeds). An allowed IPv6 network
    /// admits what it contains whatever that embeds; an allowed IPv4 network admits its addresses'
    /// embedding forms too (docs/protocol.md §9, Details).
    public func refusal(of address: [UInt8]) -> IPNetwork? {
        if allowed.contains(where: { $0.contains(address) }) { return nil }
        if let range = Self.refusedRanges.first(where: { $0.contains(address) }) { return range }
        guard let embedded = Self.embeddedIPv4(in: address) else { return nil }
        return refusal(of: embedded)
    }

    /// The IPv4 address an IPv4-compatible, NAT64 or 6to4 address carries; nil for any other address.
    static func embeddedIPv4(in address: [UInt8]) -> [UInt8]? {
        guard address.count == 16,
            let form = embeddingForms.first(where: { $0.network.contains(address) })
        else { return nil }
        return Array(address[form.offset..<form.offset + 4])
    }
}
