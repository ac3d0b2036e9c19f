import CSecp256k1

/// The baseline: libsecp256k1 called directly, no Swift wrapper, no allocation. Herald's
/// recover + address is measured against this.
enum BareSecp256k1 {
    /// Recovers and serialises the public key of a 65-byte `r ‖ s ‖ v` signature; returns the first
    /// byte of X so the work is used.
    static func recoverAndSerialize(signature: [UInt8], digest: [UInt8]) -> Int {
        signature.withUnsafeBufferPointer { signature in
            digest.withUnsafeBufferPointer { digest in
                recoverAndSerialize(signature: signature.baseAddress!, digest: digest.baseAddress!)
            }
        }
    }

    static func recoverAndSerialize(signature: UnsafePointer<UInt8>, digest: UnsafePointer<UInt8>) -> Int {
        let context: OpaquePointer = herald_secp256k1_context_static()
        var parsed = secp256k1_ecdsa_recoverable_signature()
        var point = secp256k1_pubkey()
        let recoveryId = Int32(signature[64] >= 27 ? signature[64] - 27 : signature[64])
        guard secp256k1_ecdsa_recoverable_signature_parse_compact(context, &parsed, signature, recoveryId) == 1,
            secp256k1_ecdsa_recover(context, &point, &parsed, digest) == 1
        else { return -1 }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 65) { output in
            var length = 65
            secp256k1_ec_pubkey_serialize(
                context, output.baseAddress!, &length, &point, UInt32(SECP256K1_EC_UNCOMPRESSED))
            return Int(output[1])
        }
    }
}
