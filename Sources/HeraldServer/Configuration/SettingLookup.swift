import Configuration
import HeraldCore

/// Reads one ``Setting`` through the layered `ConfigReader`, typed by swift-configuration, then checks
/// the value's range or form. A value that does not convert or does not pass is an error naming where
/// it came from (`--port`, `HERALD_PORT`, `port in herald.yaml`), never a silent fall-back to the default.
struct SettingLookup {
    let setting: Setting
    let reader: ConfigReader
    let sources: SettingSources

    private var key: ConfigKey { ConfigKey(setting.key) }

    func integer(in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        try checked(reader.int(forKey: key), "must be an integer in \(range.lowerBound)…\(range.upperBound)") {
            range.contains($0)
        }
    }

    func number(_ expectation: String, accept: (Double) -> Bool) throws(ConfigurationError) -> Double? {
        try checked(reader.double(forKey: key), expectation, accept: accept)
    }

    func boolean() throws(ConfigurationError) -> Bool? {
        try checked(reader.bool(forKey: key), "must be true or false") { _ in true }
    }

    /// A non-empty single-line string, trimmed.
    func text() throws(ConfigurationError) -> String? {
        try checked(reader.string(forKey: key).map(\.trimmed), "must be a non-empty single line") {
            !$0.isEmpty && !$0.contains("\n") && !$0.contains("\r")
        }
    }

    /// An `http(s)://` URL.
    func url() throws(ConfigurationError) -> String? {
        try checked(reader.string(forKey: key).map(\.trimmed), "must be an http(s) URL") {
            ($0.hasPrefix("https://") || $0.hasPrefix("http://")) && $0.count > 8
        }
    }

    /// A list (an array in a file, comma-separated in a flag or the environment), empty items dropped.
    func list(_ expectation: String) throws(ConfigurationError) -> [String]? {
        try checked(reader.stringArray(forKey: key).map { $0.map(\.trimmed).filter { !$0.isEmpty } }, expectation) {
            _ in true
        }
    }

    /// A list of addresses or CIDRs (`webpush.allowNetworks`, `webhooks.allowNetworks`).
    func networks() throws(ConfigurationError) -> [IPNetwork]? {
        guard let parts = try list("must be a list of addresses or CIDRs") else { return nil }
        var networks: [IPNetwork] = []
        for part in parts {
            guard let network = IPNetwork(part) else { throw invalid("\"\(part)\" is not an address or CIDR") }
            networks.append(network)
        }
        return networks
    }

    /// A string that `parse` turns into a value, or the error `expectation`.
    func parsed<Value>(_ expectation: String, _ parse: (String) -> Value?) throws(ConfigurationError) -> Value? {
        guard let raw = try checked(reader.string(forKey: key).map(\.trimmed), expectation, accept: { _ in true })
        else { return nil }
        guard let value = parse(raw) else { throw invalid(expectation) }
        return value
    }

    /// An error about this setting's value, prefixed with its source.
    func invalid(_ message: String) -> ConfigurationError {
        ConfigurationError("\(sources.name(of: setting)): \(message)")
    }

    private func checked<Value>(
        _ value: Value?, _ expectation: String, accept: (Value) -> Bool
    ) throws(ConfigurationError) -> Value? {
        // A value that did not convert to the type asked for reads as nil: the recorder says so.
        if sources.recorder.failed(setting.key) { throw invalid(expectation) }
        guard let value else { return nil }
        guard accept(value) else { throw invalid(expectation) }
        return value
    }
}
