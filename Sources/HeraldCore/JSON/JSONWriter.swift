/// Compact JSON text of a ``JSONValue``, members in their stored order.
extension JSONValue {
    public var jsonText: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): JSONValue.writeString(text, to: &out)
        case .array(let items):
            out += "["
            for (position, item) in items.enumerated() {
                if position > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (position, member) in members.enumerated() {
                if position > 0 { out += "," }
                JSONValue.writeString(member.key, to: &out)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = Hex.encode([UInt8(scalar.value)])
                out += "\\u00" + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
