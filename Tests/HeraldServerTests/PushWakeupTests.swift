import HeraldCore
import Synchronization
import Testing

@testable import HeraldServer

/// A signal wakes the lanes serving its platforms, and only those; one with nobody waiting is kept.
@Suite struct PushWakeupTests {
    @Test func aSignalWakesOnlyTheLanesOfItsPlatforms() async throws {
        let wakeup = PushWakeup()
        let androidWoke = Flag()
        let android = Task {
            await wakeup.wait(for: [.android], upTo: .seconds(60))
            androidWoke.set()
        }
        let apple = Task { await wakeup.wait(for: [.ios, .iosSandbox], upTo: .seconds(60)) }
        // Both asleep before the signal, so that it is the signal that decides who wakes.
        while wakeup.sleeping < 2 { await Task.yield() }
        // The Apple lane takes the signal and returns long before its 60 s; the Android lane, not
        // signalled, is still asleep a while after it (woken, it would have set its flag at once).
        wakeup.signal([.iosSandbox])
        await apple.value
        try await Task.sleep(for: .milliseconds(100))
        #expect(!androidWoke.isSet)
        wakeup.signal([.android])
        await android.value
        #expect(androidWoke.isSet)
    }

    @Test func aSignalWithNobodyWaitingIsKeptForItsPlatformsOnly() async throws {
        let wakeup = PushWakeup()
        wakeup.signal([.webpush])
        // Kept: the Web Push lane returns at once, well before its timeout.
        let started = ContinuousClock.now
        await wakeup.wait(for: [.webpush], upTo: .seconds(60))
        #expect(ContinuousClock.now - started < .seconds(30))
        // Not kept for another platform, nor twice: these two wait out their (short) timeouts.
        let waited = ContinuousClock.now
        await wakeup.wait(for: [.android], upTo: .milliseconds(200))
        await wakeup.wait(for: [.webpush], upTo: .milliseconds(200))
        #expect(ContinuousClock.now - waited >= .milliseconds(400))
    }
}

private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
