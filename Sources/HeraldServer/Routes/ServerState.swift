import Foundation
public import HeraldCore
public import HeraldStore
public import Logging

/// What every handler needs, built once at start.
public struct ServerState: Sendable {
    public let configuration: ServerConfiguration
    public let store: any HeraldStore
    public let verifier: OperationVerifier
    public let metrics: ServerMetrics
    /// Unix seconds. Injected so that tests control time without sleeping.
    public let clock: @Sendable () -> Int64
    public let logger: Logger
    /// The version this server reports in `/v1/info`.
    public let version: String

    public init(
        configuration: ServerConfiguration, store: any HeraldStore, metrics: ServerMetrics = ServerMetrics(),
        logger: Logger = Logger(label: "herald"), version: String = "0.1.0",
        clock: (@Sendable () -> Int64)? = nil
    ) {
        self.configuration = configuration
        self.store = store
        self.verifier = configuration.verifier
        self.metrics = metrics
        self.clock = clock ?? { Int64(Date().timeIntervalSince1970) }
        self.logger = logger
        self.version = version
    }
}
