import Foundation
import HeraldCore

/// What every route taking a signed operation needs: the verifier of docs/protocol.md §2.3 steps 1–3, the
/// clocks, the nonce's retention (step 4) and the rejection counters. Built once by ``ServerState``
/// and held by each controller.
struct SignedRequests: Sendable {
    let verifier: OperationVerifier
    let metrics: ServerMetrics
    /// Unix seconds.
    let clock: @Sendable () -> Int64
    /// Unix milliseconds, for item epochs.
    let millisecondClock: @Sendable () -> Int64
    let clockSkewSeconds: Int64

    /// Verifies a request body as `type`; a rejection is counted and thrown as its §3 error.
    func verified<Operation: SignedOperation>(
        _ body: some Collection<UInt8>, as type: Operation.Type, now: Int64
    ) throws -> VerifiedOperation<Operation> {
        switch verifier.verify(json: body, as: type, now: now) {
        case .valid(let operation):
            return operation
        case .invalid(let rejection):
            metrics.recordRejection(rejection.code)
            throw APIError(rejection)
        }
    }

    /// Until when an operation's nonce must stay spent: `expiresAt` + skew (docs/protocol.md §2.3 step 4).
    func nonceRetention(expiresAt: UInt256) -> Int64 {
        expiresAt.clampedInt64.addingReportingOverflow(clockSkewSeconds).partialValue
    }
}
