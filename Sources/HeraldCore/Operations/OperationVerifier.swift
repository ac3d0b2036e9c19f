/// A verified operation: what the server may act on.
public struct VerifiedOperation<Operation: SignedOperation>: Sendable {
    public let operation: Operation
    public let scheme: SignatureScheme
    /// The recovered signer: `operation.claimedSigner`, or for an operation that accepts delegates
    /// possibly another address, which the store must find to be a delegate (docs/protocol.md §11.1).
    public let signer: EthereumAddress
    /// The recovered public key (what `GET /v1/users/{wallet}/pubkey` serves).
    public let publicKey: PublicKey
    /// The 32 bytes that were signed (the EIP-712 hash or the EIP-191 message hash): with the signer and
    /// the nonce, what makes two copies the same operation (docs/protocol.md §11.2). The spelling of
    /// addresses and `v` do not change it; the scheme does.
    public let digest: [UInt8]
}

/// The outcome of verification: a value, not an exception.
public enum VerificationResult<Operation: SignedOperation>: Sendable {
    case valid(VerifiedOperation<Operation>)
    case invalid(OperationRejection)

    public var rejection: OperationRejection? {
        if case .invalid(let rejection) = self { return rejection }
        return nil
    }

    public var verified: VerifiedOperation<Operation>? {
        if case .valid(let verified) = self { return verified }
        return nil
    }
}

/// Applies docs/protocol.md §2.3 steps 1–3 (form, time, signature). Replay (step 4) needs storage and is
/// the server's job. Stateless and `Sendable`: one instance serves every request on every core.
public struct OperationVerifier: Sendable {
    public var audience: String
    public var domain: HeraldDomain
    public var maxValiditySeconds: Int64
    public var clockSkewSeconds: Int64

    public init(
        audience: String, chainId: UInt256 = UInt256(1), maxValiditySeconds: Int64 = 600, clockSkewSeconds: Int64 = 60
    ) {
        self.audience = audience
        self.domain = HeraldDomain(chainId: chainId)
        self.maxValiditySeconds = maxValiditySeconds
        self.clockSkewSeconds = clockSkewSeconds
    }

    /// One-call form: `verify(envelope, now:, audience:, chainId:)` with the default window and skew.
    public static func verify<Operation: SignedOperation>(
        _ envelope: RawEnvelope, as type: Operation.Type, now: Int64, audience: String, chainId: UInt256
    ) -> VerificationResult<Operation> {
        OperationVerifier(audience: audience, chainId: chainId).verify(envelope, as: type, now: now)
    }

    /// Parses envelope JSON and verifies it as `type`.
    public func verify<Operation: SignedOperation, Bytes: Collection>(
        json bytes: Bytes, as type: Operation.Type, now: Int64
    ) -> VerificationResult<Operation> where Bytes.Element == UInt8 {
        do {
            return verify(try RawEnvelope.parse(bytes), as: type, now: now)
        } catch {
            return .invalid(error)
        }
    }

    /// Verifies an envelope already built in memory (a client checking what it is about to send).
    public func verify<Operation: SignedOperation>(
        _ envelope: SignedEnvelope<Operation>, now: Int64
    )
        -> VerificationResult<Operation>
    {
        verify(envelope.raw, as: Operation.self, now: now)
    }

    /// Steps 1–3 of §2.3, in order; the first failure decides the code.
    public func verify<Operation: SignedOperation>(
        _ envelope: RawEnvelope, as type: Operation.Type, now: Int64
    )
        -> VerificationResult<Operation>
    {
        do throws(OperationRejection) {
            // 1. Form.
            let operation = try Operation(message: envelope.message)
            guard operation.audience == audience else {
                throw OperationRejection(.wrongAudience, "audience is not this server's (\(audience))")
            }
            let digest = try operation.digest(scheme: envelope.scheme, domain: domain)
            // 2. Time.
            try checkTime(issuedAt: operation.issuedAt, expiresAt: operation.expiresAt, now: now)
            // 3. Signature.
            let publicKey: PublicKey
            do throws(HeraldError) {
                let signature = try RecoverableSignature(hex: envelope.signature)
                publicKey = try signature.recoverPublicKey(digest: digest)
            } catch {
                throw OperationRejection(.badSignature, error.reason)
            }
            let signer = publicKey.address
            guard signer == operation.claimedSigner || Operation.acceptsDelegates else {
                throw OperationRejection(
                    .signatureMismatch,
                    "the signature does not recover to \(operation.claimedSigner) on chain \(domain.chainId)")
            }
            return .valid(
                VerifiedOperation(
                    operation: operation, scheme: envelope.scheme, signer: signer, publicKey: publicKey, digest: digest)
            )
        } catch {
            return .invalid(error)
        }
    }

    func checkTime(issuedAt: UInt256, expiresAt: UInt256, now: Int64) throws(OperationRejection) {
        let issued = issuedAt.clampedInt64
        let expires = expiresAt.clampedInt64
        guard issuedAt < expiresAt else { throw OperationRejection(.badRequest, "issuedAt must be before expiresAt") }
        guard issued <= now.addingReportingOverflow(clockSkewSeconds).partialValue else {
            throw OperationRejection(.notYetValid, "issuedAt is in the future")
        }
        guard now < expires else { throw OperationRejection(.expired, "the operation has expired") }
        // issued ≤ now + skew here, so the subtraction cannot overflow.
        guard expires - issued <= maxValiditySeconds else {
            throw OperationRejection(.validityTooLong, "expiresAt - issuedAt exceeds \(maxValiditySeconds) s")
        }
    }
}
