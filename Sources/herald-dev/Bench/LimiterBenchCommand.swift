import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldServer

struct LimiterBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "limiter",
        abstract: "What the per-IP rate limiter costs a request, with every request from a client never seen.",
        discussion: """
            Each request's client is found behind a trusted proxy (X-Forwarded-For) and takes a token, on \
            threads sharing one limiter, as the middleware does. Prints the time per request (p50, p99, max), \
            the buckets held and the table's bound. Target: p99 under 2 ms with 150,000 clients.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: "Distinct client addresses (half IPv4, half IPv6 /64s).")
    var clients: Int = 150_000

    @Option(name: .long, help: "Threads sharing the limiter.")
    var threads: Int = 2

    func validate() throws {
        guard (1...10_000_000).contains(clients), (1...64).contains(threads) else {
            throw ValidationError("--clients must be in 1…10,000,000 and --threads in 1…64")
        }
    }

    func run() async throws {
        let figures = RateLimiterBench.measure(clients: clients, threads: threads, configuration: HeraldSettings())
        if global.json {
            try Terminal.printJSON(figures)
            return
        }
        if CryptoBenchCommand.isDebugBuild { print("warning: this is a debug build; use `swift build -c release`") }
        print("herald-dev bench limiter: \(figures.clients) clients never seen, \(figures.threads) thread(s)")
        print(
            "per request: p50 \(format(figures.p50Microseconds)) µs, p99 \(format(figures.p99Microseconds)) µs, "
                + "max \(format(figures.maxMicroseconds)) µs (target p99 < 2,000 µs: "
                + (figures.p99Microseconds < 2000 ? "met" : "NOT met") + ")")
        print(
            "buckets held: \(figures.tracked) of \(figures.capacity) (\(figures.tableBytes / 1_048_576) MiB at most)")
    }

    private func format(_ value: Double) -> String { String(format: "%.2f", value) }
}
