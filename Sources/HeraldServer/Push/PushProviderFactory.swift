public import HeraldRelay
public import Logging

/// The providers `herald serve` runs with, from its configuration: APNs when a key file is set, FCM
/// when a service account is, the logging provider for the rest. Unreadable credentials stop the
/// server at start with a line naming the file.
public enum PushProviderFactory {
    public static func make(_ configuration: ServerConfiguration, logger: Logger) throws -> PushProviders {
        var providers = PushProviders(logger: logger)
        let apns = configuration.apns
        if let keyFile = apns.keyFile, let keyID = apns.keyID, let teamID = apns.teamID, let topic = apns.topic {
            let tokens = try APNsTokenAuthority(keyFile: keyFile, keyID: keyID, teamID: teamID)
            providers.apns = APNsProvider(
                transport: try AsyncHTTPClientTransport(caFile: apns.caFile), tokens: tokens, topic: topic,
                productionHost: apns.host, sandboxHost: apns.sandboxHost, mode: configuration.pushContent,
                maxAgeSeconds: configuration.pushMaxAgeSeconds, logger: logger)
            logger.info("APNs provider: topic \(topic), key id \(keyID), hosts \(apns.host) and \(apns.sandboxHost)")
        }
        let fcm = configuration.fcm
        if let file = fcm.serviceAccountFile {
            let account = try ServiceAccount(file: file)
            let transport = try AsyncHTTPClientTransport(caFile: fcm.caFile)
            let project = fcm.projectID ?? account.projectID
            providers.fcm = FCMProvider(
                transport: transport,
                tokens: FCMAccessTokens(account: account, tokenURI: fcm.tokenURI, transport: transport),
                projectID: project, endpoint: fcm.endpoint, mode: configuration.pushContent, logger: logger)
            logger.info("FCM provider: project \(project), endpoint \(fcm.endpoint)")
        }
        return providers
    }
}
