import Foundation
import Yams

/// The PromQL of the files under `ops/` (the Grafana dashboard and the Prometheus alert rules), read
/// from the repository, and the metric names it uses.
enum OperatorFiles {
    struct Query: Sendable, CustomStringConvertible {
        let file: String
        let expression: String
        var description: String { "\(file): \(expression)" }
    }

    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let dashboard = "ops/grafana/herald-dashboard.json"
    static let alertRules = "ops/prometheus/herald-alerts.yml"

    static func queries() throws -> [Query] {
        try dashboardQueries() + alertQueries()
    }

    /// Panel targets (`expr`) and template variable queries (`query`, `definition`).
    static func dashboardQueries() throws -> [Query] {
        let data = try Data(contentsOf: repository.appendingPathComponent(dashboard))
        return strings(under: ["expr", "query", "definition"], in: try JSONSerialization.jsonObject(with: data))
            .map { Query(file: dashboard, expression: $0) }
    }

    static func alertQueries() throws -> [Query] {
        let text = try String(contentsOf: repository.appendingPathComponent(alertRules), encoding: .utf8)
        return strings(under: ["expr"], in: try Yams.load(yaml: text) as Any)
            .map { Query(file: alertRules, expression: $0) }
    }

    /// Every string value of one of `keys`, at any depth.
    static func strings(under keys: Set<String>, in node: Any) -> [String] {
        if let object = node as? [String: Any] {
            return object.keys.sorted().flatMap { key -> [String] in
                if keys.contains(key), let text = object[key] as? String { return [text] }
                return strings(under: keys, in: object[key] as Any)
            }
        }
        if let array = node as? [Any] { return array.flatMap { strings(under: keys, in: $0) } }
        return []
    }

    /// The `herald_…` identifiers of a PromQL expression. Quoted strings (label values, regexes) are
    /// skipped, so `route="/herald_x"` names no metric.
    static func metricNames(in expression: String) -> Set<String> {
        let scalars = Array(expression.unicodeScalars)
        var names = Set<String>()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\"" || scalar == "'" || scalar == "`" {
                index += 1
                while index < scalars.count && scalars[index] != scalar {
                    // Backquoted strings have no escapes.
                    if scalars[index] == "\\" && scalar != "`" { index += 1 }
                    index += 1
                }
                index += 1
            } else if isIdentifierStart(scalar) {
                var end = index
                while end < scalars.count && (isIdentifierStart(scalars[end]) || ("0"..."9").contains(scalars[end])) {
                    end += 1
                }
                var word = String.UnicodeScalarView()
                word.append(contentsOf: scalars[index..<end])
                if String(word).hasPrefix("herald_") { names.insert(String(word)) }
                index = end
            } else {
                index += 1
            }
        }
        return names
    }

    private static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_" || scalar == ":"
    }

    /// The sample names of a Prometheus text exposition: a histogram shows as its `_bucket`, `_sum` and
    /// `_count` series, which is what a query must name.
    static func exportedNames(in exposition: String) -> Set<String> {
        var names = Set<String>()
        for line in exposition.split(separator: "\n") where !line.hasPrefix("#") {
            if let name = line.split(whereSeparator: { $0 == "{" || $0 == " " }).first { names.insert(String(name)) }
        }
        return names
    }

    /// Each query's metric names that the exposition does not export, as "name (query)".
    static func unexported(_ queries: [Query], exported: Set<String>) -> [String] {
        queries.flatMap { query in
            metricNames(in: query.expression).subtracting(exported).sorted().map { "\($0) (\(query))" }
        }
    }
}
