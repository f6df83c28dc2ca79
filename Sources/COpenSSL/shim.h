// OpenSSL's libcrypto (Debian's libssl-dev): AES-256-GCM, Ed25519, SHA-256 and random bytes for
// model archives and signed deployment manifests. Swift calls it through CModelDeployment's wrappers.
#ifndef FRAMEGRAPH_COPENSSL_SHIM_H
#define FRAMEGRAPH_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/rand.h>
#endif
