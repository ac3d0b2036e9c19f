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
            ("ts", .string(Date().ISO8601Format(.iso8601.time(includingFractionalSeconds: true).year().month().day()))),
            ("level", .string(event.level.rawValue)),
            ("label", .string(label)),
            ("msg", .string(event.message.description)),
        ]
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) { members.append((key, .string(value.description))) }
        FileHandle.standardError.write(Data((JSONValue.object(members).jsonText + "\n").utf8))
    }
}
