import GRDB
import HeraldCore

/// A value to bind, so that a statement and its arguments read as one line.
enum RawValue {
    case blob([UInt8])
    case text(String)
    case integer(Int64)
    case null

    static func blobOrNull(_ bytes: [UInt8]?) -> RawValue { bytes.map { .blob($0) } ?? .null }

    static func address(_ address: EthereumAddress) -> RawValue { .blob(address.bytes) }
}

extension RawStatement {
    /// The cached statement with `values` bound to its parameters in order.
    init(_ db: Database, _ sql: String, _ values: RawValue...) throws {
        try self.init(db, sql)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .blob(let bytes): bind(index, bytes)
            case .text(let text): bind(index, text)
            case .integer(let number): bind(index, number)
            case .null: bind(index, blobOrNull: nil)
            }
        }
    }
}
