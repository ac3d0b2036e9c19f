import Foundation
import HeraldCLISupport
import HeraldCore

/// Trust on first use of a server (CLI.md): the audience and chain id read from `/v1/info` the first
/// time are pinned in `$HERALD_HOME/servers.json`. A later change is refused unless `--audience`
/// names the new audience, so that a server cannot start collecting signatures meant for another.
struct ServerTrust {
    let home: String

    var path: String { home + "/servers.json" }

    struct Pin: Codable, Equatable {
        let audience: String
        let chainId: String
    }

    func check(server: URL, info: HeraldHTTPClient.ServerInfo, acceptAudience: String?) throws {
        var pins = load()
        let key = server.absoluteString.trimmingTrailingSlashes
        let current = Pin(audience: info.audience, chainId: info.chainId.description)
        if let acceptAudience, acceptAudience != info.audience {
            throw CLIError(
                .refused, "the server's audience is \(info.audience), not the \(acceptAudience) given with --audience")
        }
        if let pinned = pins[key], pinned != current, acceptAudience == nil {
            throw CLIError(
                .refused,
                "\(key) changed identity: pinned audience \(pinned.audience) chainId \(pinned.chainId), now audience "
                    + "\(current.audience) chainId \(current.chainId); if this is expected, pass --audience \(current.audience)"
            )
        }
        if let origin = Self.origin(of: server), origin != info.audience {
            Terminal.printWarning("the server's audience \(info.audience) is not the origin of \(key) (\(origin))")
        }
        if pins[key] != current {
            pins[key] = current
            try save(pins)
        }
    }

    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        if let port = url.port, port != defaultPort { return "\(scheme)://\(host):\(port)" }
        return "\(scheme)://\(host)"
    }

    private func load() -> [String: Pin] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        return (try? JSONDecoder().decode([String: Pin].self, from: data)) ?? [:]
    }

    private func save(_ pins: [String: Pin]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do {
            try AtomicFile.makeFolder(home)
            try AtomicFile.write(Array(try encoder.encode(pins)), to: path, replace: true)
        } catch let error as HeraldError {
            throw CLIError(.unexpected, "cannot save \(path): \(error.reason)")
        }
    }
}
