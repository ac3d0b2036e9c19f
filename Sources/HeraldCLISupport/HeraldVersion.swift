/// The version both executables print (`--version`) and send as their User-Agent.
package enum HeraldVersion {
    package static let current = "0.1.0"
}
