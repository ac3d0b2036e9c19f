import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore
import HeraldStore
import HeraldTesting

struct WebhookBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Webhook events delivered per second to a local receiver, with the server's CPU per event.",
        discussion: """
            Seeds a temporary database with a channel whose webhook asks for `subscribed` events and --events \
            subscriptions to it (each queues one event, in its transaction), starts a receiver in this process and \
            `herald serve` on the database, and waits until the receiver has accepted every event. Prints events/s \
            (server start included), requests and events a request, and the server's CPU per event. With \
            --failed-pushes N it instead times, at the store, recording N pushes of a broadcast as failed in \
            batches of 48 (as an outbox lane does), once without a webhook and once with one asking for `failed` \
            events, and prints the time a push each way: what queuing the events costs.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Events to deliver.") var events: Int = 20_000
    @Option(name: .customLong("failed-pushes"), help: "Time recording this many failed pushes instead.")
    var failedPushes: Int?

    func validate() throws {
        guard (1...1_000_000).contains(events) else { throw ValidationError("--events must be 1…1,000,000") }
        if let failedPushes, !(48...1_000_000).contains(failedPushes) {
            throw ValidationError("--failed-pushes must be 48…1,000,000")
        }
    }

    func run() async throws {
        if let failedPushes {
            var line: [String] = []
            for asked in [false, true, false, true] {
                let micros = try await timeFailedRecords(failedPushes, webhookAsks: asked)
                line.append(String(format: "%@ %.1f µs", asked ? "with" : "without", micros))
            }
            print("recording \(failedPushes) failed pushes, µs a push, alternated: " + line.joined(separator: ", "))
            return
        }
        let herald = try BenchExecutables.herald()
        let folder = NSTemporaryDirectory() + "herald-bench-webhooks-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/webhooks.sqlite"
        let receiver = FakeWebhookReceiver()
        try await receiver.start()
        try await seed(database, url: receiver.url)
        let started = ContinuousClock.now
        let server = try ChildProcess.start(
            herald,
            [
                "serve", "--database", database, "--port", "0", "--rate-limit", "0", "--log-level", "warning",
                "--webhooks-allow-network", "127.0.0.1/32",
            ], log: folder + "/serve.log")
        defer { server.stop() }
        let progress = ProgressLine("delivering", total: events, unit: "events", json: global.json)
        var delivered = 0
        while delivered < events {
            try await Task.sleep(for: .milliseconds(100))
            guard server.isRunning else {
                throw CLIError(.unexpected, "herald serve exited: \(server.output().suffix(2000))")
            }
            let now = receiver.acceptedEventCount
            progress.advance(by: now - delivered)
            delivered = now
        }
        progress.finish()
        let seconds = (ContinuousClock.now - started).seconds
        let cpu = server.sample()?.cpuSeconds ?? 0
        let requests = receiver.deliveries.count
        await receiver.stop()
        let line = String(
            format: "%d events in %.2f s (server start included): %.0f events/s; %d requests (%.1f events each); "
                + "server %.1f µs CPU per event",
            events, seconds, Double(events) / seconds, requests, Double(events) / Double(max(requests, 1)),
            cpu * 1e6 / Double(events))
        if global.json {
            print(
                JSONValue.object([
                    ("events", .number(String(events))), ("seconds", .number(String(format: "%.3f", seconds))),
                    ("requests", .number(String(requests))),
                    ("serverCPUMicrosecondsPerEvent", .number(String(format: "%.1f", cpu * 1e6 / Double(events)))),
                ]).jsonText)
        } else {
            print(line)
        }
    }

    /// The channel, its webhook, and the subscriptions whose events wait, at the store.
    private func seed(_ database: String, url: String) async throws {
        let store = try await CommandStore.open(database)
        let channel = try BenchWallets.channel()
        try await store.saveChannel(BenchWallets.channelRecord(channel.address))
        let now = Int64(Date().timeIntervalSince1970)
        let change = WebhookChange(
            channel: channel.address, url: url, events: WebhookEventSet([.subscribed]),
            signed: SignedChange(
                publicKey: channel.publicKey, nonce: UInt256.randomNonce(), operation: .random(),
                nonceRetainedUntil: now + 660, now: now))
        guard case .applied(.set) = try await store.apply(change) else {
            throw CLIError(.unexpected, "the bench webhook was not set")
        }
        let seeding = ProgressLine("seeding", total: events, unit: "subscribers", json: global.json)
        try await BroadcastBenchCommand.seed(store, channel: channel.address, from: 0, to: events, progress: seeding)
        seeding.finish()
        try await store.close()
    }

    /// Microseconds a push to record `count` pushes of one broadcast as failed, 48 to a call.
    private func timeFailedRecords(_ count: Int, webhookAsks: Bool) async throws -> Double {
        let folder = NSTemporaryDirectory() + "herald-bench-failed-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try await CommandStore.open(folder + "/failed.sqlite")
        let channel = try BenchWallets.channel()
        try await store.saveChannel(BenchWallets.channelRecord(channel.address))
        let now = Int64(Date().timeIntervalSince1970)
        func signed() -> SignedChange {
            SignedChange(
                publicKey: channel.publicKey, nonce: UInt256.randomNonce(), operation: .random(),
                nonceRetainedUntil: now + 660, now: now)
        }
        if webhookAsks {
            _ = try await store.apply(
                WebhookChange(
                    channel: channel.address, url: "https://hooks.example.org/bench",
                    events: WebhookEventSet([.failed]),
                    signed: signed()))
        }
        try await BroadcastBenchCommand.seed(store, channel: channel.address, from: 0, to: count)
        let payload = try NotificationPayload.parse(NotificationDraft(title: "Bench", body: "fails").broadcastPayload())
        _ = try await store.submit(
            NotificationSubmission(
                channel: channel.address, publicKey: channel.publicKey, payload: payload, nonce: UInt256.randomNonce(),
                operation: .random(), nonceRetainedUntil: now + 660, now: now, epoch: now * 1000,
                policy: .unlimited))
        var claimed: [QueuedPush] = []
        while claimed.count < count {
            let batch = try await store.claimDuePushes(
                now: now + 1, limit: 1_000, platforms: nil, owner: "bench", leaseUntil: now + 3_600)
            if batch.isEmpty { break }
            claimed += batch
        }
        let started = ContinuousClock.now
        for start in stride(from: 0, to: claimed.count, by: 48) {
            let chunk = claimed[start..<min(start + 48, claimed.count)]
            try await store.record(
                chunk.map { PushAttemptResult(id: $0.id, disposition: .failed, error: "APNs 400 BadDeviceToken") },
                owner: "bench")
        }
        let seconds = (ContinuousClock.now - started).seconds
        if webhookAsks, try await store.queuedWebhookEventCount() != claimed.count {
            throw CLIError(.unexpected, "the failed pushes queued fewer events than pushes")
        }
        try await store.close()
        return seconds * 1e6 / Double(max(claimed.count, 1))
    }
}
