import Foundation

/// This process's CPU time and resident memory, from `/proc/self/stat`, for `GET /metrics`'s standard
/// `process_cpu_seconds_total` and `process_resident_memory_bytes`: what a benchmark or an operator needs
/// to put a rate beside its cost (`herald-dev bench register` prints the server's CPU per registration).
public enum ProcessStats {
    public struct Sample: Sendable {
        public let cpuSeconds: Double
        public let residentBytes: Int
    }

    /// nil where there is no procfs (macOS), or when it cannot be read (a process that has exited).
    public static func current(pid: Int32? = nil) -> Sample? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/stat"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return parse(
            text, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))), pageSize: Int(sysconf(Int32(_SC_PAGESIZE))))
    }

    /// proc(5): the command name (field 2) is in parentheses and may hold spaces, so fields are counted
    /// after its closing parenthesis: utime and stime are fields 14 and 15, rss (pages) field 24.
    static func parse(_ stat: String, ticksPerSecond: Double, pageSize: Int) -> Sample? {
        guard let close = stat.lastIndex(of: ")"), ticksPerSecond > 0 else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so field n is fields[n - 3].
        guard fields.count > 21, let user = Double(fields[11]), let system = Double(fields[12]),
            let pages = Int(fields[21])
        else { return nil }
        return Sample(cpuSeconds: (user + system) / ticksPerSecond, residentBytes: pages * pageSize)
    }

    /// The two series in Prometheus text format.
    static func exposition(_ sample: Sample) -> String {
        """
        # HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
        # TYPE process_cpu_seconds_total counter
        process_cpu_seconds_total \(String(format: "%.2f", sample.cpuSeconds))
        # HELP process_resident_memory_bytes Resident memory size in bytes.
        # TYPE process_resident_memory_bytes gauge
        process_resident_memory_bytes \(sample.residentBytes)

        """
    }
}
