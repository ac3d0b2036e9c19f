import HeraldCore

extension String {
    /// Percent-decoding of a path segment (`eip155%3A1%3A0x…`).
    var removingPercentEncoding: String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(Hex.nibbleValue),
                    let low = iterator.next().flatMap(Hex.nibbleValue)
                else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
