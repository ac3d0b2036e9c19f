import Configuration
import HeraldRelay

/// A configuration value that could not be used: the CLI prints it and exits 64.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// Builds a ``HeraldSettings`` from its four sources, in order of precedence: command-line flags,
/// `HERALD_*` environment variables, a config file (YAML or JSON), defaults. swift-configuration does
/// the layering and the reading; ``SettingTable`` names and checks every setting.
public enum ConfigurationLoader {
    /// Flag names (without `--`) accepted by `herald serve`, in CLI.md order.
    public static var flagNames: [String] { SettingTable.all.map(\.flag) }

    /// Merges the sources. `arguments` are `herald serve`'s settings flags as typed (`--port 9000`,
    /// `--port=9000`); `configFile` is the `--config` path.
    public static func load(
        arguments: [String] = [], environment: [String: String] = [:], configFile: String? = nil
    ) async throws(ConfigurationError) -> HeraldSettings {
        let settings = SettingTable.all
        let flags = try parseFlags(arguments, settings: settings)
        let file: ConfigFile?
        if let configFile {
            file = try await ConfigFile.load(path: configFile, knownKeys: Set(settings.map(\.key)))
        } else {
            file = nil
        }
        let sources = SettingSources(flags: flags, environment: environment, file: file, settings: settings)
        var configuration = HeraldSettings()
        for setting in settings {
            try setting.apply(&configuration, SettingLookup(setting: setting, reader: sources.reader, sources: sources))
        }
        try checkPushSettings(configuration)
        try loadVAPIDKey(&configuration)
        return configuration
    }

    /// `--name value` and `--name=value` pairs, keyed by the setting's environment variable so that the
    /// flags' provider reads them by the environment's rules. A list setting's flag may be repeated.
    static func parseFlags(_ arguments: [String], settings: [Setting]) throws(ConfigurationError) -> [String: String] {
        let byFlag = Dictionary(uniqueKeysWithValues: settings.map { ($0.flag, $0) })
        var values: [String: String] = [:]
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw ConfigurationError("unexpected argument \"\(argument)\" (settings are --name value)")
            }
            var name = String(argument.dropFirst(2))
            let value: String
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            } else if byFlag[name]?.isSwitch == true, index == arguments.endIndex || arguments[index].hasPrefix("--") {
                // A switch alone turns its setting on (`--bisq-relay`); `--bisq-relay false` still reads.
                value = "true"
            } else {
                guard index < arguments.endIndex else { throw ConfigurationError("--\(name) needs a value") }
                value = arguments[index]
                index += 1
            }
            guard let setting = byFlag[name] else {
                throw ConfigurationError("unknown option --\(name) (see herald serve --help)")
            }
            if let earlier = values[setting.environment] {
                guard setting.isList else { throw ConfigurationError("--\(name) given twice") }
                values[setting.environment] = earlier + "," + value
            } else {
                values[setting.environment] = value
            }
        }
        return values
    }

    /// docs/protocol.md §4.3: incomplete provider settings stop the server at start, naming what is missing.
    static func checkPushSettings(_ configuration: HeraldSettings) throws(ConfigurationError) {
        let apns = configuration.apns
        let apnsMissing = [
            ("--apns-key-id", apns.keyID), ("--apns-team-id", apns.teamID), ("--apns-topic", apns.topic),
        ].filter { $0.1 == nil }.map(\.0)
        if apns.keyFile != nil, !apnsMissing.isEmpty {
            throw ConfigurationError("APNs settings are incomplete: missing \(apnsMissing.joined(separator: ", "))")
        }
        if apns.keyFile == nil, apnsMissing.count < 3 {
            throw ConfigurationError("APNs settings are incomplete: missing --apns-key-file")
        }
        let fcm = configuration.fcm
        if fcm.serviceAccountFile == nil, fcm.projectID != nil || fcm.tokenURI != nil {
            throw ConfigurationError("FCM settings are incomplete: missing --fcm-service-account")
        }
        let upstream = configuration.upstream
        let upstreamMissing = [
            ("--upstream", upstream.url), ("--upstream-installation-id", upstream.installationID),
            ("--upstream-installation-key-file", upstream.installationKeyFile),
        ].filter { $0.1 == nil }.map(\.0)
        if upstreamMissing.count < 3 && !upstreamMissing.isEmpty || upstream.caFile != nil && upstream.url == nil {
            let missing = upstreamMissing.isEmpty ? ["--upstream"] : upstreamMissing
            throw ConfigurationError("upstream settings are incomplete: missing \(missing.joined(separator: ", "))")
        }
        if let id = upstream.installationID, upstream.url != nil, !RelayCredentials.isInstallationID(id.lowercased()) {
            throw ConfigurationError("--upstream-installation-id: \(id) is not an installation id (a UUID)")
        }
    }

    /// docs/protocol.md §9: a VAPID key needs a subject; the other Web Push settings need a key. The key is
    /// read now, so that an unreadable one stops the server at start and `/v1/info` can publish it.
    static func loadVAPIDKey(_ configuration: inout HeraldSettings) throws(ConfigurationError) {
        let webpush = configuration.webpush
        guard let keyFile = webpush.vapidKeyFile else {
            if webpush.subject != nil || webpush.caFile != nil || !webpush.allowNetworks.isEmpty {
                throw ConfigurationError("Web Push settings are incomplete: missing --webpush-vapid-key-file")
            }
            return
        }
        guard webpush.subject != nil else {
            throw ConfigurationError("Web Push settings are incomplete: missing --webpush-subject")
        }
        do {
            configuration.webpush.vapidPublicKey = try VAPIDKey(file: keyFile).publicKey
        } catch {
            throw ConfigurationError("--webpush-vapid-key-file: \(error.description)")
        }
    }

    /// One line per setting for `herald serve --help`: flag, environment variable, file key.
    public static var settingsHelp: String {
        func padded(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(1, width - text.count))
        }
        return SettingTable.all.map { padded("--" + $0.flag, 24) + padded($0.environment, 30) + $0.key }
            .joined(separator: "\n")
    }
}
