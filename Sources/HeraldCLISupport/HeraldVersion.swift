import CHeraldBuild

/// The version both executables print (`--version`) and send as their User-Agent.
package enum HeraldVersion {
    package static let number = "0.3.0"

    /// The commit this binary was built from, when `make` stamped it (release, install, deb); nil after
    /// a plain `swift build`.
    package static var commit: String? {
        guard let pointer = herald_build_commit_or_null() else { return nil }
        let text = String(cString: pointer)
        return text.isEmpty ? nil : text
    }

    /// `0.3.0 (commit 1a2b3c4d5e6f)`, or the number alone when no commit was stamped.
    package static var current: String {
        commit.map { "\(number) (commit \($0))" } ?? number
    }

    /// What goes in a User-Agent: `herald/0.3.0`.
    package static var userAgent: String { "herald/\(number)" }
}
