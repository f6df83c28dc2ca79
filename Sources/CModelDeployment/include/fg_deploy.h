// Thin C wrappers over libcrypto and libcurl for model deployment (ModelDeployment's Swift code
// calls only these): no OpenSSL or curl types cross into Swift.
#ifndef FRAMEGRAPH_DEPLOY_H
#define FRAMEGRAPH_DEPLOY_H
#include <stddef.h>

// ---- libcrypto -----------------------------------------------------------------------------------

/// Cryptographically strong random bytes. 0 on success.
int fg_random_bytes(unsigned char *out, size_t count);

/// SHA-256 of `count` bytes. 0 on success.
int fg_sha256(const unsigned char *data, size_t count, unsigned char out[32]);

/// An incremental SHA-256 (files hashed while they download or are read in pieces).
typedef struct fg_sha256_state fg_sha256_state;
fg_sha256_state *fg_sha256_begin(void);
int fg_sha256_update(fg_sha256_state *state, const unsigned char *data, size_t count);
/// Writes the digest and frees the state. 0 on success.
int fg_sha256_end(fg_sha256_state *state, unsigned char out[32]);
/// Frees a state without finishing it.
void fg_sha256_free(fg_sha256_state *state);

/// AES-256-GCM encryption of `count` bytes (`out` has room for `count`), with `aad` authenticated
/// but not encrypted; writes the 16-byte tag. 0 on success.
int fg_aes256gcm_seal(const unsigned char key[32], const unsigned char nonce[12], const unsigned char *aad, size_t aad_count,
                      const unsigned char *in, size_t count, unsigned char *out, unsigned char tag[16]);

/// AES-256-GCM decryption. 0: authentic and decrypted; 1: authentication failed (wrong key,
/// tampered header, ciphertext or tag; `out` must then be discarded); -1: library error.
int fg_aes256gcm_open(const unsigned char key[32], const unsigned char nonce[12], const unsigned char *aad, size_t aad_count,
                      const unsigned char *in, size_t count, const unsigned char tag[16], unsigned char *out);

/// A new Ed25519 key pair. 0 on success.
int fg_ed25519_keypair(unsigned char private_key[32], unsigned char public_key[32]);
/// The public key of a private key. 0 on success.
int fg_ed25519_public(const unsigned char private_key[32], unsigned char public_key[32]);
/// Signs `count` bytes. 0 on success.
int fg_ed25519_sign(const unsigned char private_key[32], const unsigned char *message, size_t count, unsigned char signature[64]);
/// 1: the signature is valid for this key and message; 0: it is not; -1: library error.
int fg_ed25519_verify(const unsigned char public_key[32], const unsigned char *message, size_t count, const unsigned char signature[64]);

// ---- libcurl -------------------------------------------------------------------------------------

/// One GET request.
typedef struct {
    const char *url;
    /// PEM file of the certificate authorities to trust (NULL: the system's).
    const char *ca_file;
    /// Sent as `Authorization: Bearer …` (NULL: none).
    const char *bearer_token;
    /// Ask for the body from this byte on (a `Range` request), 0 for all of it.
    long long resume_from;
    /// Connection timeout in milliseconds.
    long connect_timeout_ms;
    /// Abort when slower than `low_speed_bytes` per second for `low_speed_seconds` (0: never).
    long low_speed_bytes;
    long low_speed_seconds;
    /// The whole request's deadline in milliseconds, from connecting to the last byte (0: none).
    long total_timeout_ms;
    /// Abort once more than this many body bytes arrive (negative: no limit).
    long long max_bytes;
    /// When ≥ 0: body bytes are appended to this file descriptor (and hashed into `hash` when it is
    /// not NULL) here in C, and the write callback is not called.
    int write_fd;
    fg_sha256_state *hash;
} fg_http_request;

/// Receives body bytes; returns `count` to go on, anything else aborts the transfer.
typedef size_t (*fg_http_write_fn)(void *user, const unsigned char *data, size_t count);
/// Progress (bytes of this transfer received so far, expected total or 0 when unknown); non-zero aborts.
typedef int (*fg_http_progress_fn)(void *user, long long received, long long total);

/// What happened.
typedef struct {
    /// HTTP status (0 when no response arrived).
    long status;
    /// libcurl's result code (0: the transfer completed; 18: the body ended early; 28: timeout;
    /// 60: TLS certificate not trusted; 7: could not connect; 42: aborted by a callback …).
    int curl_code;
    /// libcurl's message for `curl_code`, or empty.
    char message[256];
    /// Body bytes received in this transfer.
    long long received;
    /// Whether the server answered a range request with the range (206).
    int partial_content;
} fg_http_result;

/// Performs the GET (blocking). 0 when the transfer completed (whatever the HTTP status), -1 when it
/// did not (see `result`).
int fg_http_get(const fg_http_request *request, fg_http_write_fn write, fg_http_progress_fn progress, void *user,
                fg_http_result *result);

#endif
