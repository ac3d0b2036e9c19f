import HeraldStore
import PostgresNIO

/// A statement whose text is put together from parts (a broadcast's variants), with its values named:
/// `$name` becomes `$1`, `$2`, … in order of first use, and each name is bound once however often the text
/// uses it. The values never enter the text.
enum NamedParameters {
    static func query(
        _ text: String, _ values: [String: any PostgresThrowingDynamicTypeEncodable]
    ) throws -> PostgresQuery {
        var sql = ""
        var binds = PostgresBindings()
        var positions: [String: Int] = [:]
        var scalars = text.unicodeScalars[...]
        while let next = scalars.first {
            scalars = scalars.dropFirst()
            guard next == "$", let start = scalars.first, isNameStart(start) else {
                sql.unicodeScalars.append(next)
                continue
            }
            let name = String(String.UnicodeScalarView(scalars.prefix { isNameStart($0) || ("0"..."9").contains($0) }))
            scalars = scalars.dropFirst(name.unicodeScalars.count)
            if let position = positions[name] {
                sql += "$\(position)"
                continue
            }
            guard let value = values[name] else { throw StoreError("the statement names $\(name) without a value") }
            try binds.append(value)
            positions[name] = positions.count + 1
            sql += "$\(positions.count)"
        }
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }

    private static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_"
    }
}
