import ArgumentParser
import HeraldCLISupport

/// What developers and operators run to measure and try Herald, kept out of the shipped `herald` so that it
/// carries no test code (the fakes, their certificate maker, the benchmarks), as `redis-benchmark` sits
/// beside `redis-server`.
@main
struct HeraldDevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald-dev",
        abstract: "Herald's benchmarks and local fakes of APNs, FCM and Web Push, for trials and measurements.",
        version: HeraldVersion.current,
        subcommands: [BenchCommand.self, FakeAPNsCommand.self, FakeFCMCommand.self, FakeWebPushCommand.self]
    )

    static func main() async { await CommandRunner.run(Self.self) }
}
