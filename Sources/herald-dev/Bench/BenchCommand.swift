import ArgumentParser

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks that print figures (build with -c release for meaningful numbers).",
        subcommands: [
            CryptoBenchCommand.self, RegisterBenchCommand.self, StoreBenchCommand.self, BroadcastBenchCommand.self,
            FeedsBenchCommand.self, InboxBenchCommand.self, PushBenchCommand.self, WebPushBenchCommand.self,
            LimiterBenchCommand.self, SubsetBenchCommand.self, WebhookBenchCommand.self,
        ]
    )
}
