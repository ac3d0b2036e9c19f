import Foundation
import HeraldCLISupport
import HeraldCore

/// A channel invitation, in the manner of Aries out-of-band invitations: a URL whose `c_i` query
/// parameter is base64url JSON `{"@type":"herald/1.0/invitation","@id",label,channel,server,audience,chainId,icon,url}`.
struct Invitation: Equatable {
    static let type = "herald/1.0/invitation"

    let id: String
    let label: String
    let channel: EthereumAddress
    let server: String
    let audience: String
    let chainId: UInt256
    let icon: String
    let url: String

    var json: JSONValue {
        .object([
            ("@type", .string(Self.type)), ("@id", .string(id)), ("label", .string(label)),
            ("channel", .string(channel.checksummed)), ("server", .string(server)), ("audience", .string(audience)),
            ("chainId", .number(chainId.description)), ("icon", .string(icon)), ("url", .string(url)),
        ])
    }

    /// `<server>/invite?c_i=<base64url JSON>`.
    var urlString: String { server.trimmingTrailingSlashes + "/invite?c_i=" + Base64URL.encode(json.jsonBytes) }

    /// Decodes an invitation URL; nil when `text` carries no `c_i` parameter (it is then a plain address).
    static func decode(_ text: String) throws -> Invitation? {
        guard let components = URLComponents(string: text),
            let encoded = components.queryItems?.first(where: { $0.name == "c_i" })?.value
        else { return nil }
        guard let bytes = Base64URL.decode(encoded), let json = try? JSONParser.parse(bytes) else {
            throw CLIError(.badInput, "the invitation's c_i is not base64url JSON")
        }
        guard json["@type"]?.stringValue == type else {
            throw CLIError(.badInput, "not a Herald invitation (@type must be \(type))")
        }
        guard let channelText = json["channel"]?.stringValue, let channel = try? EthereumAddress(parsing: channelText),
            let server = json["server"]?.stringValue, let audience = json["audience"]?.stringValue,
            case .number(let chainText)? = json["chainId"], let chainId = UInt256(decimal: chainText)
        else {
            throw CLIError(.badInput, "the invitation lacks a valid channel, server, audience or chainId")
        }
        return Invitation(
            id: json["@id"]?.stringValue ?? "", label: json["label"]?.stringValue ?? "", channel: channel,
            server: server,
            audience: audience, chainId: chainId, icon: json["icon"]?.stringValue ?? "",
            url: json["url"]?.stringValue ?? "")
    }
}
