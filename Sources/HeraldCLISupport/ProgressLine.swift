import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One progress line on stderr for long work, `signing: 41200/100000 registrations (41%) · 8120/s ·
/// 5.1 s · eta 7 s`, rewritten in place with `\r`. Only on a terminal and never with `--json`: a pipe, a
/// log file or a script sees the same stderr as before, with no carriage returns in it.
///
/// `advance` is the per-item call, safe from any task: one branch when off; when on, a relaxed atomic
/// add and a clock read. The line is formatted and written at most ten times a second, by whichever
/// caller finds it due, and not before `delay`, so that short work does not flash a line.
package final class ProgressLine: Sendable {
    package let isEnabled: Bool
    private let label: String
    private let unit: String
    private let showsRate: Bool
    private let start = ContinuousClock.now
    private let done = Atomic<Int>(0)
    /// Nanoseconds after `start` at which the line may next be drawn.
    private let nextDraw: Atomic<Int64>
    private let state: Mutex<State>

    private struct State {
        var total: Int?
        var note: String?
        var shown = false
        var finished = false
    }

    package static let redrawInterval: Int64 = 100_000_000

    /// The one decision: a line only for a person watching a terminal.
    package static func shows(json: Bool, stderrIsTerminal: Bool) -> Bool { !json && stderrIsTerminal }

    package static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    package convenience init(_ label: String, total: Int?, unit: String, json: Bool, showsRate: Bool = true) {
        self.init(
            label, total: total, unit: unit, showsRate: showsRate,
            enabled: Self.shows(json: json, stderrIsTerminal: Self.stderrIsTerminal))
    }

    package init(
        _ label: String, total: Int?, unit: String, showsRate: Bool = true, enabled: Bool,
        delay: Duration = .milliseconds(300)
    ) {
        self.label = label
        self.unit = unit
        self.showsRate = showsRate
        isEnabled = enabled
        nextDraw = Atomic(Self.nanoseconds(delay))
        state = Mutex(State(total: total))
    }

    /// `count` more items done.
    package func advance(by count: Int = 1) {
        guard isEnabled else { return }
        done.add(count, ordering: .relaxed)
        drawIfDue()
    }

    /// Sets the count, the total (which may change as work is discovered) and a note shown last
    /// (`page 3`). For steps of work, not items: it takes a lock.
    package func update(done value: Int, total: Int?, note: String? = nil) {
        guard isEnabled else { return }
        done.store(value, ordering: .relaxed)
        state.withLock { state in
            state.total = total
            state.note = note
        }
        drawIfDue()
    }

    /// Clears the line so another message can be printed; the next due update draws it again.
    package func interrupt() {
        guard isEnabled else { return }
        state.withLock { state in
            guard state.shown else { return }
            Self.write("\r\u{1B}[K")
            state.shown = false
        }
    }

    /// Clears the line for good: the command's own result follows.
    package func finish() {
        guard isEnabled else { return }
        state.withLock { state in
            if state.shown { Self.write("\r\u{1B}[K") }
            state.shown = false
            state.finished = true
        }
    }

    private func drawIfDue() {
        let elapsed = Self.nanoseconds(ContinuousClock.now - start)
        let due = nextDraw.load(ordering: .relaxed)
        guard elapsed >= due,
            nextDraw.compareExchange(expected: due, desired: elapsed + Self.redrawInterval, ordering: .relaxed)
                .exchanged
        else { return }
        state.withLock { state in
            guard !state.finished else { return }
            let text = Self.render(
                label: label, done: done.load(ordering: .relaxed), total: state.total, unit: unit,
                seconds: Double(elapsed) / 1e9, showsRate: showsRate, note: state.note)
            Self.write("\r" + text + "\u{1B}[K")
            state.shown = true
        }
    }

    /// The line's text: `label: done/total unit (pct) · rate/s · elapsed · eta · note`.
    package static func render(
        label: String, done: Int, total: Int?, unit: String, seconds: Double, showsRate: Bool, note: String? = nil
    ) -> String {
        var parts: [String] = []
        let unitText = unit.isEmpty ? "" : " " + unit
        if let total, total > 0 {
            let percent = min(100, done * 100 / total)
            parts.append("\(label): \(done)/\(total)\(unitText) (\(percent)%)")
        } else {
            parts.append("\(label): \(done)\(unitText)")
        }
        let rate = seconds > 0 ? Double(done) / seconds : 0
        if showsRate { parts.append(rate >= 10 ? String(format: "%.0f/s", rate) : String(format: "%.1f/s", rate)) }
        parts.append(String(format: "%.1f s", seconds))
        if let total, total > done, rate > 0 {
            parts.append(String(format: "eta %.0f s", (Double(total - done) / rate).rounded(.up)))
        }
        if let note { parts.append(note) }
        return parts.joined(separator: " · ")
    }

    private static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
