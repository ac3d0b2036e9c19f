import CSecp256k1

/// Owns the one libsecp256k1 context Herald uses for signing, key derivation and ECDH.
///
/// A context is safe to share between threads for every call that takes it as `const`, which is all
/// of them after creation; randomisation (side-channel blinding) happens once, here.
final class Secp256k1Context: @unchecked Sendable {
    static let shared = Secp256k1Context()

    let pointer: OpaquePointer

    private init() {
        // Creation only fails on out-of-memory or bad flags, neither of which input can cause.
        guard let created = secp256k1_context_create(UInt32(SECP256K1_FLAGS_TYPE_CONTEXT)) else {
            fatalError("secp256k1_context_create failed: out of memory")
        }
        pointer = created
        var seed = [UInt8](repeating: 0, count: 32)
        var rng = SystemRandomNumberGenerator()
        for index in seed.indices { seed[index] = UInt8.random(in: .min ... .max, using: &rng) }
        _ = secp256k1_context_randomize(pointer, seed)
    }

    deinit { secp256k1_context_destroy(pointer) }

    /// libsecp256k1's built-in context: enough for parsing, serialising, verification and recovery.
    static var verification: OpaquePointer { herald_secp256k1_context_static() }
}
