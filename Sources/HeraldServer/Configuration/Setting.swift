/// One setting of `herald serve` and its spellings in each source (CLI.md, "Server options"):
/// the file key, which is also its swift-configuration key (`push.attempts`), the flag without its
/// dashes (`push-attempts`) and the environment variable (`HERALD_PUSH_ATTEMPTS`). `apply` reads the
/// value through a ``SettingLookup`` (typed, validated, naming its source when bad) into the
/// configuration; a setting no source gives leaves the default in place.
struct Setting: Sendable {
    let key: String
    let flag: String
    let environment: String
    /// A list setting (`trustedProxies`): its flag may be repeated, the values joined.
    let isList: Bool
    /// A boolean whose flag may stand alone to mean true (`--bisq-relay`).
    let isSwitch: Bool
    let apply: @Sendable (inout HeraldSettings, SettingLookup) throws(ConfigurationError) -> Void

    init(
        _ key: String, flag: String, environment: String, isList: Bool = false, isSwitch: Bool = false,
        apply: @escaping @Sendable (inout HeraldSettings, SettingLookup) throws(ConfigurationError) -> Void
    ) {
        self.key = key
        self.flag = flag
        self.environment = environment
        self.isList = isList
        self.isSwitch = isSwitch
        self.apply = apply
    }
}
