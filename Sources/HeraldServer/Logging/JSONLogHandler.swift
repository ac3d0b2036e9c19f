import Foundation
import HeraldCore
public import Logging

/// One JSON object per line on stderr: `{"ts","level","label","msg",…metadata}`. For log shippers.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var members: [(key: String, value: JSONValue)] = [
            ("ts", .string(Date().ISO8601Format(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))),
            ("level", .string(event.level.rawValue)),
            ("label", .string(label)),
            ("msg", .string(event.message.description)),
        ]
        for (key, value) in Self.merged(metadata, event.metadata) { members.append((key, .string(value.description))) }
        FileHandle.standardError.write(Data((JSONValue.object(members).jsonText + "\n").utf8))
    }
}
