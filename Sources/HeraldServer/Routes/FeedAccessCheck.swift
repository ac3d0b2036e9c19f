import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// docs/protocol.md §3: a private read carries a FeedAccess envelope in `Authorization: Herald
/// <base64url>`. A missing or unreadable header, or a path wallet other than the signer, is
/// `401 unauthorized`; faults inside the envelope get the codes of §2.3. An accepted one refreshes the
/// signer's public key.
struct FeedAccessCheck: Sendable {
    let signed: SignedRequests
    let keys: any BindingStore

    /// A read of `wallet`'s data: the FeedAccess must be signed by that wallet.
    func authorize(
        _ request: Request, wallet: EthereumAddress, context: HeraldRequestContext
    ) async throws -> VerifiedOperation<FeedAccess> {
        let verified = try await verify(request, context: context)
        guard verified.signer == wallet else {
            throw APIError(.unauthorized, "this FeedAccess was signed by \(verified.signer), not \(wallet)")
        }
        return verified
    }

    /// For reads whose path names no wallet: any valid FeedAccess; the caller checks its signer.
    func authorizeAnySigner(_ request: Request, context: HeraldRequestContext) async throws -> EthereumAddress {
        try await verify(request, context: context).signer
    }

    private func verify(
        _ request: Request, context: HeraldRequestContext
    ) async throws -> VerifiedOperation<FeedAccess> {
        guard let header = request.headers[.authorization] else {
            throw APIError(.unauthorized, "this read needs Authorization: Herald <base64url FeedAccess envelope>")
        }
        let envelope: RawEnvelope
        do {
            envelope = try RawEnvelope.parse(authorizationHeader: header)
        } catch {
            throw APIError(.unauthorized, "the Authorization header does not hold a readable envelope")
        }
        switch signed.verifier.verify(envelope, as: FeedAccess.self, now: signed.clock()) {
        case .invalid(let rejection):
            signed.metrics.recordRejection(rejection.code)
            throw APIError(rejection)
        case .valid(let verified):
            try await StoreCall.run(context) {
                try await keys.rememberPublicKey(verified.publicKey, of: verified.signer, now: signed.clock())
            }
            return verified
        }
    }
}
