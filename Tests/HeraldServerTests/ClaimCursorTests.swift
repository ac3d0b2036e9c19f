import HeraldCore
import HeraldStore
import Testing

@testable import HeraldServer

/// Where a lane's claims start (`ClaimCursor`), with instants given: past the last claim while claims come
/// back full, from the start after a short one and once per rescan interval.
@Suite struct ClaimCursorTests {
    static func pushes(_ positions: [(Int64, Int64)]) throws -> [QueuedPush] {
        try positions.map { nextAttemptAt, id in
            QueuedPush(
                id: id, sid: nil, wallet: try EthereumAddress(bytes: [UInt8](repeating: 1, count: 20)),
                platform: .ios, deviceToken: "aa", apnsID: [UInt8](repeating: 0, count: 16), queuedAt: 1, attempts: 0,
                notification: nil, nextAttemptAt: nextAttemptAt)
        }
    }

    @Test func fullClaimsContinueAfterTheLastPushAndAShortOneStartsOver() throws {
        var cursor = ClaimCursor(rescanEvery: .seconds(1))
        let zero = ContinuousClock.now
        #expect(cursor.start(at: zero, limit: 3) == nil, "the first claim starts at the beginning")
        // The largest position, whatever order the pushes came in.
        cursor.claimed(try Self.pushes([(10, 3), (12, 1), (10, 7)]))
        #expect(cursor.start(at: zero + .milliseconds(10), limit: 2) == OutboxPosition(nextAttemptAt: 12, id: 1))
        cursor.claimed(try Self.pushes([(12, 4), (13, 2)]))
        #expect(cursor.start(at: zero + .milliseconds(20), limit: 2) == OutboxPosition(nextAttemptAt: 13, id: 2))
        // Fewer than asked for: nothing more past it, so what is due behind it is looked for next.
        cursor.claimed(try Self.pushes([(14, 9)]))
        #expect(cursor.start(at: zero + .milliseconds(30), limit: 2) == nil)
        cursor.claimed([])
        #expect(cursor.start(at: zero + .milliseconds(40), limit: 2) == nil)
    }

    @Test func claimsThatKeepComingBackFullStillStartOverOncePerInterval() throws {
        var cursor = ClaimCursor(rescanEvery: .seconds(1))
        let zero = ContinuousClock.now
        #expect(cursor.start(at: zero, limit: 1) == nil)
        cursor.claimed(try Self.pushes([(5, 1)]))
        #expect(cursor.start(at: zero + .milliseconds(999), limit: 1) == OutboxPosition(nextAttemptAt: 5, id: 1))
        cursor.claimed(try Self.pushes([(5, 2)]))
        #expect(cursor.start(at: zero + .seconds(1), limit: 1) == nil, "a second on: from the start")
        cursor.claimed(try Self.pushes([(4, 9)]))
        #expect(cursor.start(at: zero + .milliseconds(1_500), limit: 1) == OutboxPosition(nextAttemptAt: 4, id: 9))
        #expect(cursor.start(at: zero + .seconds(2), limit: 1) == nil, "and again a second after that rescan")
    }
}
