import Configuration
import Synchronization

/// The sources of `herald serve`'s settings, in swift-configuration providers, first match wins:
/// command-line flags, `HERALD_*` environment variables, the `--config` file, then (in
/// ``HeraldSettings``) the defaults.
///
/// Flags arrive as text exactly as environment variables do, so both are read by swift-configuration's
/// `EnvironmentVariablesProvider` (the same conversions: `"8080"` to an integer, `a,b` to a list), the flags
/// keyed by their setting's variable name in a provider of their own, ahead of the real environment.
struct SettingSources: Sendable {
    let reader: ConfigReader
    let recorder: SourceRecorder
    /// How the file is named in errors (`herald.yaml`), when there is one.
    let fileName: String?

    init(
        flags: [String: String], environment: [String: String], file: ConfigFile?, settings: [Setting]
    ) {
        let names = Dictionary(uniqueKeysWithValues: settings.map { ($0.key, $0.environment) })
        // The reader asks for `push.attempts`; the environment spells it `HERALD_PUSH_ATTEMPTS`.
        let toVariable: @Sendable (AbsoluteConfigKey) -> AbsoluteConfigKey = { key in
            names[key.components.joined(separator: ".")].map { AbsoluteConfigKey([$0]) } ?? key
        }
        var providers: [any ConfigProvider] = [
            KeyMappingProvider(
                upstream: EnvironmentVariablesProvider(environmentVariables: flags), keyMapper: toVariable),
            KeyMappingProvider(
                upstream: EnvironmentVariablesProvider(environmentVariables: environment), keyMapper: toVariable),
        ]
        if let file { providers.append(file.provider) }
        recorder = SourceRecorder()
        reader = ConfigReader(providers: providers, accessReporter: recorder)
        fileName = file?.name
    }

    /// Where `setting`'s value was read from, as a person would type it.
    func name(of setting: Setting) -> String {
        switch recorder.provider(of: setting.key) {
        case 0: return "--\(setting.flag)"
        case 1: return setting.environment
        default: return "\(setting.key) in \(fileName ?? "the config file")"
        }
    }
}

/// Remembers, for each key read, which provider answered (its index in the reader's list) and whether
/// its value failed to convert: swift-configuration's non-throwing reads report both only here.
final class SourceRecorder: AccessReporter, Sendable {
    private struct Outcome {
        var provider: Int
        var failed: Bool
    }

    private let outcomes = Mutex<[String: Outcome]>([:])

    func report(_ event: AccessEvent) {
        let key = event.metadata.key.components.joined(separator: ".")
        // Providers are asked in order until one answers or fails, so the last one asked is the source.
        guard let last = event.providerResults.indices.last else { return }
        var failed = event.conversionError != nil
        switch event.providerResults[last].result {
        case .failure: failed = true
        case .success(let lookup) where lookup.value == nil && !failed: return
        case .success: break
        }
        outcomes.withLock { $0[key] = Outcome(provider: last, failed: failed) }
    }

    func provider(of key: String) -> Int? { outcomes.withLock { $0[key]?.provider } }

    func failed(_ key: String) -> Bool { outcomes.withLock { $0[key]?.failed ?? false } }
}
