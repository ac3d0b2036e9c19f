/// Spaces, tabs and carriage returns trimmed from both ends (header values, list items, settings).
extension String {
    var trimmed: String {
        String(
            drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }
                .reversed())
    }
}
