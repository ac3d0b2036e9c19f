import Foundation
public import Logging

/// Plain-text log lines on stderr: `<time> <level> <label>: <message> <metadata>`.
///
/// Unlike swift-log's `StreamLogHandler`, setting metadata costs nothing: Hummingbird sets a request
/// id on every request's logger, and formatting it eagerly showed up in profiles of busy servers.
/// Formatting happens only for lines that are actually written.
public struct TextLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = Date().ISO8601Format() + " \(event.level) \(label): \(event.message)"
        let merged = Self.merged(metadata, event.metadata)
        if !merged.isEmpty { line += " " + merged.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

extension LogHandler {
    /// The handler's metadata overlaid with the event's, sorted by key for stable output.
    static func merged(
        _ base: Logger.Metadata, _ event: Logger.Metadata?
    ) -> [(key: String, value: Logger.MetadataValue)] {
        base.merging(event ?? [:]) { $1 }.sorted { $0.key < $1.key }
    }
}
