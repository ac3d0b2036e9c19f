/// Runs an operation repeatedly for a fixed time, several rounds, and reports the median rate.
struct BenchRunner {
    let secondsPerRound: Double
    let rounds: Int

    struct Result: Encodable {
        let name: String
        let opsPerSecond: Double
        let microsecondsPerOp: Double
    }

    /// `body` runs one operation and returns something derived from its output, so the optimiser
    /// cannot drop the work.
    func measure(_ name: String, _ body: () throws -> Int) rethrows -> Result {
        var sink = 0
        var rates: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<rounds {
            var operations = 0
            let start = clock.now
            let deadline = start.advanced(by: .milliseconds(Int64(secondsPerRound * 1000)))
            var now = start
            while now < deadline {
                // Check the clock every 16 operations: reading it costs ~25 ns, a keccak ~1 µs.
                for _ in 0..<16 { sink &+= try body() }
                operations += 16
                now = clock.now
            }
            let elapsed = (now - start) / .nanoseconds(1)
            rates.append(Double(operations) / (elapsed / 1e9))
        }
        BenchRunner.blackHole(sink)
        let median = rates.sorted()[rates.count / 2]
        return Result(name: name, opsPerSecond: median, microsecondsPerOp: 1e6 / median)
    }

    @inline(never)
    static func blackHole(_ value: Int) {
        if value == 0x5eed_5eed { print("") }
    }
}
