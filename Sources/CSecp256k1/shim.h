#ifndef HERALD_CSECP256K1_SHIM_H
#define HERALD_CSECP256K1_SHIM_H

#include <secp256k1.h>
#include <secp256k1_recovery.h>
#include <secp256k1_ecdh.h>

/// Swift 6 rejects the mutable-looking global `secp256k1_context_static`; hand it out through a function.
static inline const secp256k1_context *herald_secp256k1_context_static(void) {
    return secp256k1_context_static;
}

#endif
