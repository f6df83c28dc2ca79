// libcrypto wrappers (fg_deploy.h): EVP interfaces only, every context freed on every path.
#include "fg_deploy.h"
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <limits.h>

int fg_random_bytes(unsigned char *out, size_t count) {
    if (count > INT_MAX) return -1;
    return RAND_bytes(out, (int)count) == 1 ? 0 : -1;
}

int fg_sha256(const unsigned char *data, size_t count, unsigned char out[32]) {
    unsigned int length = 0;
    return EVP_Digest(data, count, out, &length, EVP_sha256(), NULL) == 1 && length == 32 ? 0 : -1;
}

struct fg_sha256_state { EVP_MD_CTX *context; };

fg_sha256_state *fg_sha256_begin(void) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (!context) return NULL;
    if (EVP_DigestInit_ex(context, EVP_sha256(), NULL) != 1) { EVP_MD_CTX_free(context); return NULL; }
    fg_sha256_state *state = OPENSSL_malloc(sizeof *state);
    if (!state) { EVP_MD_CTX_free(context); return NULL; }
    state->context = context;
    return state;
}

int fg_sha256_update(fg_sha256_state *state, const unsigned char *data, size_t count) {
    return EVP_DigestUpdate(state->context, data, count) == 1 ? 0 : -1;
}

int fg_sha256_end(fg_sha256_state *state, unsigned char out[32]) {
    unsigned int length = 0;
    int ok = EVP_DigestFinal_ex(state->context, out, &length) == 1 && length == 32;
    fg_sha256_free(state);
    return ok ? 0 : -1;
}

void fg_sha256_free(fg_sha256_state *state) {
    if (!state) return;
    EVP_MD_CTX_free(state->context);
    OPENSSL_free(state);
}

int fg_aes256gcm_seal(const unsigned char key[32], const unsigned char nonce[12], const unsigned char *aad, size_t aad_count,
                      const unsigned char *in, size_t count, unsigned char *out, unsigned char tag[16]) {
    if (count > INT_MAX || aad_count > INT_MAX) return -1;
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    if (!c) return -1;
    int length = 0, ok = EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1
        && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1
        && EVP_EncryptInit_ex(c, NULL, NULL, key, nonce) == 1
        && (aad_count == 0 || EVP_EncryptUpdate(c, NULL, &length, aad, (int)aad_count) == 1)
        && (count == 0 || EVP_EncryptUpdate(c, out, &length, in, (int)count) == 1)
        && EVP_EncryptFinal_ex(c, out + (count == 0 ? 0 : length), &length) == 1
        && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
    EVP_CIPHER_CTX_free(c);
    return ok ? 0 : -1;
}

int fg_aes256gcm_open(const unsigned char key[32], const unsigned char nonce[12], const unsigned char *aad, size_t aad_count,
                      const unsigned char *in, size_t count, const unsigned char tag[16], unsigned char *out) {
    if (count > INT_MAX || aad_count > INT_MAX) return -1;
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    if (!c) return -1;
    unsigned char expected[16];
    for (int i = 0; i < 16; i++) expected[i] = tag[i];
    int length = 0, setup = EVP_DecryptInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1
        && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1
        && EVP_DecryptInit_ex(c, NULL, NULL, key, nonce) == 1
        && (aad_count == 0 || EVP_DecryptUpdate(c, NULL, &length, aad, (int)aad_count) == 1)
        && (count == 0 || EVP_DecryptUpdate(c, out, &length, in, (int)count) == 1)
        && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, expected) == 1;
    int result = -1;
    if (setup) {
        int final = 0;
        result = EVP_DecryptFinal_ex(c, out + (count == 0 ? 0 : length), &final) == 1 ? 0 : 1;
    }
    EVP_CIPHER_CTX_free(c);
    return result;
}

static EVP_PKEY *private_key_of(const unsigned char private_key[32]) {
    return EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, private_key, 32);
}

int fg_ed25519_keypair(unsigned char private_key[32], unsigned char public_key[32]) {
    if (fg_random_bytes(private_key, 32) != 0) return -1;
    return fg_ed25519_public(private_key, public_key);
}

int fg_ed25519_public(const unsigned char private_key[32], unsigned char public_key[32]) {
    EVP_PKEY *key = private_key_of(private_key);
    if (!key) return -1;
    size_t length = 32;
    int ok = EVP_PKEY_get_raw_public_key(key, public_key, &length) == 1 && length == 32;
    EVP_PKEY_free(key);
    return ok ? 0 : -1;
}

int fg_ed25519_sign(const unsigned char private_key[32], const unsigned char *message, size_t count, unsigned char signature[64]) {
    EVP_PKEY *key = private_key_of(private_key);
    if (!key) return -1;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    size_t length = 64;
    int ok = c && EVP_DigestSignInit(c, NULL, NULL, NULL, key) == 1
        && EVP_DigestSign(c, signature, &length, message, count) == 1 && length == 64;
    EVP_MD_CTX_free(c);
    EVP_PKEY_free(key);
    return ok ? 0 : -1;
}

int fg_ed25519_verify(const unsigned char public_key[32], const unsigned char *message, size_t count, const unsigned char signature[64]) {
    EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, public_key, 32);
    if (!key) return -1;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int result = -1;
    if (c && EVP_DigestVerifyInit(c, NULL, NULL, NULL, key) == 1) {
        result = EVP_DigestVerify(c, signature, 64, message, count) == 1 ? 1 : 0;
    }
    EVP_MD_CTX_free(c);
    EVP_PKEY_free(key);
    return result;
}
