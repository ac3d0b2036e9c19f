import Configuration
import Foundation
import SystemPackage
import Yams

/// The `--config` file: YAML (JSON, being YAML, is read too), through swift-configuration's
/// `FileProvider<YAMLSnapshot>`. Keys are the first column of docs/configuration.md; a dotted key is a nested
/// mapping (`log: {level: debug}`) or spelled flat (`log.level: debug`).
///
/// swift-configuration ignores keys nobody asks for; a misspelt key silently doing nothing is how an
/// operator loses an afternoon, so the file's keys are listed first and an unknown one is an error.
struct ConfigFile: Sendable {
    let provider: any ConfigProvider
    let name: String

    static func load(path: String, knownKeys: Set<String>) async throws(ConfigurationError) -> ConfigFile {
        let name = (path as NSString).lastPathComponent
        if path.lowercased().hasSuffix(".toml") {
            throw ConfigurationError(
                "\(path): TOML configuration files are no longer read; write the same keys as YAML "
                    + "(e.g. herald.yaml, nested mappings for the [sections]) and pass that file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("cannot read config file \(path)")
        }
        let keys = try fileKeys(String(decoding: data, as: UTF8.self), name: name)
        for key in keys.sorted() where !knownKeys.contains(key) {
            throw ConfigurationError("unknown key \"\(key)\" in \(name)")
        }
        do {
            let provider = try await FileProvider<YAMLSnapshot>(filePath: FilePath(path))
            return ConfigFile(provider: provider, name: name)
        } catch {
            throw ConfigurationError("\(name): \(error)")
        }
    }

    /// The file's leaf keys, dotted. Every leaf must be a scalar or a list of scalars.
    static func fileKeys(_ text: String, name: String) throws(ConfigurationError) -> [String] {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw ConfigurationError("\(name): not valid YAML: \(error)")
        }
        guard let root else { return [] }
        guard case .mapping(let mapping) = root else {
            throw ConfigurationError("\(name): the top level must be a mapping of keys to values")
        }
        var keys: [String] = []
        try collect(mapping, prefix: "", into: &keys, name: name)
        var seen = Set<String>()
        for key in keys where !seen.insert(key).inserted {
            throw ConfigurationError("\(key) in \(name): given twice")
        }
        return keys
    }

    private static func collect(
        _ mapping: Node.Mapping, prefix: String, into keys: inout [String], name: String
    ) throws(ConfigurationError) {
        for (keyNode, value) in mapping {
            guard let part = keyNode.string else { throw ConfigurationError("\(name): a key is not a string") }
            let key = prefix.isEmpty ? part : prefix + "." + part
            switch value {
            case .mapping(let nested):
                try collect(nested, prefix: key, into: &keys, name: name)
            case .scalar(let scalar):
                if scalar.style == .plain, ["", "~", "null", "Null", "NULL"].contains(scalar.string) {
                    throw ConfigurationError("\(key) in \(name): has no value")
                }
                keys.append(key)
            case .sequence(let items):
                guard items.allSatisfy({ $0.scalar != nil }) else {
                    throw ConfigurationError("\(key) in \(name): a list may hold strings and numbers only")
                }
                keys.append(key)
            case .alias:
                throw ConfigurationError("\(key) in \(name): anchors and aliases are not read")
            }
        }
    }
}
