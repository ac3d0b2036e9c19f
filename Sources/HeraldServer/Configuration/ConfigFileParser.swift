import HeraldCore

/// Flattens a config file into `key → value` text, keys dotted by section (`log.level`).
///
/// TOML support covers what a server config needs: `[section]` and `[a.b]` headers, `key = value`
/// with basic ("…", escapes) or literal ('…') strings, integers, floats, booleans, and arrays of
/// those (joined with commas, as `trustedProxies` takes them), and `#` comments. Anything else is
/// an error naming the line, never a silent guess.
enum ConfigFileParser {
    static func toml(_ text: String) throws(ConfigurationError) -> [String: String] {
        var result: [String: String] = [:]
        var section = ""
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = offset + 1
            let line = stripComment(String(rawLine)).trimmed
            if line.isEmpty { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), !line.hasPrefix("[["), line.count > 2 else {
                    throw ConfigurationError("config line \(lineNumber): bad section header")
                }
                section = String(line.dropFirst().dropLast()).trimmed
                guard isKey(section) else { throw ConfigurationError("config line \(lineNumber): bad section name") }
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("config line \(lineNumber): expected key = value")
            }
            let key = String(line[..<equals]).trimmed
            guard isKey(key) else { throw ConfigurationError("config line \(lineNumber): bad key \"\(key)\"") }
            let fullKey = section.isEmpty ? key : section + "." + key
            guard result[fullKey] == nil else {
                throw ConfigurationError("config line \(lineNumber): \(fullKey) given twice")
            }
            do {
                result[fullKey] = try value(String(line[line.index(after: equals)...]).trimmed)
            } catch {
                throw ConfigurationError("config line \(lineNumber): \(error.description)")
            }
        }
        return result
    }

    static func json(_ text: String) throws(ConfigurationError) -> [String: String] {
        let root: JSONValue
        do { root = try JSONParser.parse(text) } catch { throw ConfigurationError("config file: \(error.reason)") }
        guard root.objectMembers != nil else {
            throw ConfigurationError("config file: the top level must be an object")
        }
        var result: [String: String] = [:]
        try flatten(root, prefix: "", into: &result)
        return result
    }

    private static func flatten(
        _ value: JSONValue, prefix: String, into result: inout [String: String]
    ) throws(ConfigurationError) {
        switch value {
        case .object(let members):
            for (key, member) in members {
                try flatten(member, prefix: prefix.isEmpty ? key : prefix + "." + key, into: &result)
            }
        case .string(let text): result[prefix] = text
        case .number(let text): result[prefix] = text
        case .bool(let flag): result[prefix] = flag ? "true" : "false"
        case .array(let items):
            var parts: [String] = []
            for item in items {
                switch item {
                case .string(let text): parts.append(text)
                case .number(let text): parts.append(text)
                default: throw ConfigurationError("config file: \(prefix) may hold strings and numbers only")
                }
            }
            result[prefix] = parts.joined(separator: ",")
        case .null: throw ConfigurationError("config file: \(prefix) is null")
        }
    }

    private static func value(_ text: String) throws(ConfigurationError) -> String {
        if text.hasPrefix("[") {
            guard text.hasSuffix("]") else { throw ConfigurationError("unterminated array") }
            let inner = String(text.dropFirst().dropLast()).trimmed
            if inner.isEmpty { return "" }
            return try splitArray(inner).map { item throws(ConfigurationError) in try scalar(item.trimmed) }.joined(
                separator: ",")
        }
        return try scalar(text)
    }

    private static func scalar(_ text: String) throws(ConfigurationError) -> String {
        if text.hasPrefix("\"") {
            guard text.count >= 2, text.hasSuffix("\"") else { throw ConfigurationError("unterminated string") }
            return try unescape(String(text.dropFirst().dropLast()))
        }
        if text.hasPrefix("'") {
            guard text.count >= 2, text.hasSuffix("'") else { throw ConfigurationError("unterminated string") }
            return String(text.dropFirst().dropLast())
        }
        if text == "true" || text == "false" { return text }
        let number = text.replacingUnderscores
        if Int(number) != nil || Double(number) != nil { return number }
        throw ConfigurationError("\"\(text)\" is not a string, number or boolean")
    }

    /// Splits an array body on commas outside quotes.
    private static func splitArray(_ text: String) throws(ConfigurationError) -> [String] {
        var items: [String] = []
        var current = ""
        var quote: Character?
        for char in text {
            if let open = quote {
                current.append(char)
                if char == open { quote = nil }
            } else if char == "\"" || char == "'" {
                quote = char
                current.append(char)
            } else if char == "," {
                items.append(current)
                current = ""
            } else {
                current.append(char)
            }
        }
        guard quote == nil else { throw ConfigurationError("unterminated string in array") }
        if !current.trimmed.isEmpty { items.append(current) }
        return items
    }

    private static func unescape(_ text: String) throws(ConfigurationError) -> String {
        do {
            guard let value = try JSONParser.parse("\"" + text + "\"").stringValue else {
                throw ConfigurationError("bad string")
            }
            return value
        } catch {
            throw ConfigurationError("bad escape in string")
        }
    }

    private static func stripComment(_ line: String) -> String {
        var quote: Character?
        for (index, char) in zip(line.indices, line) {
            if let open = quote {
                if char == open { quote = nil }
            } else if char == "\"" || char == "'" {
                quote = char
            } else if char == "#" {
                return String(line[..<index])
            }
        }
        return line
    }

    private static func isKey(_ key: String) -> Bool {
        !key.isEmpty
            && key.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                    || $0 == "-"
                    || $0 == "."
            }
    }
}

extension String {
    var trimmed: String {
        String(
            drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }
                .reversed())
    }

    fileprivate var replacingUnderscores: String { String(filter { $0 != "_" }) }
}
