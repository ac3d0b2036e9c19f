import Foundation
import HeraldCore
public import HeraldRelay
public import Logging

/// The providers `herald serve` runs with, from its configuration: APNs when a key file is set, FCM
/// when a service account is, the logging provider for the rest. Unreadable credentials stop the
/// server at start with a line naming the file.
public enum PushProviderFactory {
    public static func make(_ configuration: HeraldSettings, logger: Logger) throws -> PushProviders {
        var providers = PushProviders(logger: logger)
        providers.webpush = try makeWebPush(configuration, logger: logger)
        let apns = configuration.apns
        if let keyFile = apns.keyFile, let keyID = apns.keyID, let teamID = apns.teamID, let topic = apns.topic {
            let tokens = try APNsTokenAuthority(keyFile: keyFile, keyID: keyID, teamID: teamID)
            providers.apns = APNsProvider(
                transport: try HTTP2PushTransport(caFile: apns.caFile), tokens: tokens, topic: topic,
                productionHost: apns.host, sandboxHost: apns.sandboxHost, logger: logger)
            logger.info("APNs provider: topic \(topic), key id \(keyID), hosts \(apns.host) and \(apns.sandboxHost)")
        }
        let fcm = configuration.fcm
        if let file = fcm.serviceAccountFile {
            let account = try ServiceAccount(file: file)
            let transport = try HTTP2PushTransport(caFile: fcm.caFile)
            let project = fcm.projectID ?? account.projectID
            providers.fcm = FCMProvider(
                transport: transport,
                tokens: FCMAccessTokens(account: account, tokenURI: fcm.tokenURI, transport: transport),
                projectID: project, endpoint: fcm.endpoint, logger: logger)
            logger.info("FCM provider: project \(project), endpoint \(fcm.endpoint)")
        }
        let upstream = configuration.upstream
        if let url = upstream.url, let id = upstream.installationID, let keyFile = upstream.installationKeyFile,
            providers.apns == nil || providers.fcm == nil
        {
            let key: String
            do {
                key = try String(contentsOfFile: keyFile, encoding: .utf8).trimmingCharacters(
                    in: .whitespacesAndNewlines)
            } catch {
                throw RelayConfigurationError("cannot read the upstream installation key file \(keyFile)")
            }
            guard !key.isEmpty else {
                throw RelayConfigurationError("the upstream installation key file \(keyFile) is empty")
            }
            let shown = Self.origin(of: url)
            if url.hasPrefix("http://") {
                logger.warning("upstream relay \(shown) is plain http: use it only on this host or a private network")
            }
            let relay = UpstreamPushProvider(
                transport: try AsyncHTTPClientTransport(caFile: upstream.caFile), upstream: url,
                installationID: id.lowercased(), key: key,
                batchLimit: UpstreamPushProvider.batchLimit(forConcurrency: configuration.push.concurrency),
                logger: logger)
            let through = [providers.apns == nil ? "APNs" : nil, providers.fcm == nil ? "FCM" : nil].compactMap { $0 }
            providers.apns = providers.apns ?? relay
            providers.fcm = providers.fcm ?? relay
            logger.info(
                "upstream relay: \(through.joined(separator: " and ")) pushes go through \(shown), installation \(id)")
        }
        return providers
    }

    static func makeWebPush(
        _ configuration: HeraldSettings, logger: Logger
    ) throws -> (any PushProvider)? {
        let settings = configuration.webpush
        guard let keyFile = settings.vapidKeyFile, let subject = settings.subject else { return nil }
        let key = try VAPIDKey(file: keyFile)
        let resolver = CachingHostResolver(SystemHostResolver(timeout: .seconds(settings.resolveTimeoutSeconds)))
        let transport = try GuardedWebPushTransport(
            policy: WebPushNetworkPolicy(allowed: settings.allowNetworks), resolver: resolver, caFile: settings.caFile)
        let allowed = settings.allowNetworks.map(\.description).joined(separator: ", ")
        let networks = allowed.isEmpty ? "" : ", allowed networks \(allowed)"
        logger.info("Web Push provider: VAPID key \(key.publicKey.prefix(12))…, subject \(subject)\(networks)")
        return WebPushProvider(
            transport: transport, tokens: VAPIDTokens(key: key, subject: subject),
            originConcurrency: settings.originConcurrency, logger: logger)
    }

    /// The upstream's `scheme://host[:port]` for the log: a base URL with a path (or user info) may
    /// carry something its operator would rather not see in log files.
    static func origin(of url: String) -> String {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme, let host = parts.host else {
            return "(unreadable URL)"
        }
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost)" + (parts.port.map { ":\($0)" } ?? "")
    }
}
