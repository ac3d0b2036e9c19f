import HeraldCLISupport

/// Runs operations repeatedly for a fixed time and reports median rates. Rounds are interleaved
/// (A, B, C, A, B, C, …) so that a noisy neighbour slows every benchmark alike instead of one,
/// which keeps ratios between them honest.
struct BenchRunner {
    let secondsPerRound: Double
    let rounds: Int

    struct Case {
        let name: String
        /// Runs one operation and returns something derived from its output, so the optimiser
        /// cannot drop the work.
        let body: () throws -> Int
        /// Slow operations get at least this long per round.
        var minimumSeconds: Double = 0
    }

    struct Result: Encodable {
        let name: String
        let opsPerSecond: Double
        let microsecondsPerOp: Double
    }

    /// Times every case `rounds` times; `progress` advances once per timed round, outside the timing.
    func measure(_ cases: [Case], progress: ProgressLine? = nil) throws -> [Result] {
        var rates = [[Double]](repeating: [], count: cases.count)
        var sink = 0
        for _ in 0..<rounds {
            for (index, item) in cases.enumerated() {
                let (rate, value) = try timeOneRound(item, seconds: max(secondsPerRound, item.minimumSeconds))
                rates[index].append(rate)
                sink &+= value
                progress?.advance()
            }
        }
        progress?.finish()
        BenchRunner.blackHole(sink)
        return zip(cases, rates).map { item, samples in
            let median = samples.sorted()[samples.count / 2]
            return Result(name: item.name, opsPerSecond: median, microsecondsPerOp: 1e6 / median)
        }
    }

    private func timeOneRound(_ item: Case, seconds: Double) throws -> (Double, Int) {
        let clock = ContinuousClock()
        var sink = 0
        var operations = 0
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int64(seconds * 1000)))
        var now = start
        while now < deadline {
            // Read the clock every 4 operations: it costs ~25 ns, the cheapest operation ~0.5 µs.
            for _ in 0..<4 { sink &+= try item.body() }
            operations += 4
            now = clock.now
        }
        let elapsed = Double((now - start) / .nanoseconds(1))
        return (Double(operations) / (elapsed / 1e9), sink)
    }

    @inline(never)
    static func blackHole(_ value: Int) {
        if value == 0x5eed_5eed { print("") }
    }
}
