import Testing

@testable import HeraldServer

@Suite struct ProcessStatsTests {
    // A command name with spaces and parentheses: fields are counted after the last ')'.
    static let stat =
        "4242 (herald (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 9 0 123 1000000 2048 "
        + "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"

    @Test func cpuAndResidentMemoryAreReadFromTheRightFields() throws {
        let sample = try #require(ProcessStats.parse(Self.stat, ticksPerSecond: 100, pageSize: 4096))
        #expect(sample.cpuSeconds == 3.0)
        #expect(sample.residentBytes == 2048 * 4096)
        #expect(ProcessStats.exposition(sample).contains("process_cpu_seconds_total 3.00\n"))
    }

    @Test func aTruncatedStatIsNotASample() {
        #expect(ProcessStats.parse("4242 (herald) S 1 2 3", ticksPerSecond: 100, pageSize: 4096) == nil)
        #expect(ProcessStats.parse("no parenthesis", ticksPerSecond: 100, pageSize: 4096) == nil)
    }

    @Test func thisProcessHasASample() throws {
        let sample = try #require(ProcessStats.current())
        #expect(sample.cpuSeconds > 0)
        #expect(sample.residentBytes > 1 << 20)
    }
}
