import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

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

    /// What the operation signed, which with its nonce identifies it (docs/protocol.md §11.2).
    func identity<Operation: SignedOperation>(of verified: VerifiedOperation<Operation>) throws -> OperationDigest {
        guard let digest = OperationDigest(verified.digest) else {
            throw APIError(.internal, "an operation's digest is not 32 bytes")
        }
        return digest
    }

    /// The answer of an operation received again (docs/protocol.md §11.2): its first answer, `response`, with
    /// `Idempotent-Replay: true`; counted, and nothing else done.
    func replay(_ response: Response) -> Response {
        metrics.recordIdempotentReplay()
        var response = response
        response.headers[.idempotentReplay] = "true"
        return response
    }

    /// Until when an operation's nonce must stay spent: `expiresAt` + skew (docs/protocol.md §2.3 step 4).
    func nonceRetention(expiresAt: UInt256) -> Int64 {
        expiresAt.clampedInt64.addingReportingOverflow(clockSkewSeconds).partialValue
    }
}
