import Foundation
import Synchronization

/// The `Date` header's value (RFC 9110 §5.6.7, IMF-fixdate), formatted once a second, for the answers
/// `DeviceRouteFastPath` writes itself (Hummingbird adds its own to the others).
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func now() -> String {
        let seconds = time(nil)
        return cache.withLock { cache in
            if cache.second != seconds {
                cache = (seconds, format(seconds))
            }
            return cache.text
        }
    }

    static func format(_ seconds: time_t) -> String {
        var seconds = seconds
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let weekday = days[Int(parts.tm_wday)]
        let day = "\(weekday), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(1900 + parts.tm_year)"
        return "\(day) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
