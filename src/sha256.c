/*
 * sha256.c -- SHA-256 of array data, from OpenSSL's libcrypto (a well-kept implementation that uses
 * the CPU's SHA instructions where it has them), when the library is built with it
 * (NPZS_HAVE_OPENSSL; the Makefile finds libssl-dev).  Without it every call here is a stub that
 * nothing reaches: npzs_hash and policies that hash refuse to start (npzs_sha256_built() == 0).
 *
 * The context lives in the parser's own memory (taken through the caller's hooks), so OpenSSL's
 * one-shot-free SHA256_* calls are used: they allocate nothing and keep no state outside the
 * context.  OpenSSL 3 marks them deprecated in favour of EVP, whose EVP_MD_CTX is allocated
 * through OpenSSL's process-wide allocator; both run the same code.
 */
#include "internal.h"

#ifdef NPZS_HAVE_OPENSSL
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

_Static_assert(sizeof(SHA256_CTX) <= NPZS_SHA_CTX_WORDS * sizeof(uint64_t), "room for SHA256_CTX");

int npzs__sha256_built(void) { return 1; }
void npzs__sha256_init(uint64_t *ctx) { SHA256_Init((SHA256_CTX *)(void *)ctx); }
void npzs__sha256_update(uint64_t *ctx, const uint8_t *s, size_t n) { SHA256_Update((SHA256_CTX *)(void *)ctx, s, n); }
void npzs__sha256_final(uint64_t *ctx, uint8_t out[32]) { SHA256_Final(out, (SHA256_CTX *)(void *)ctx); }
#else
int npzs__sha256_built(void) { return 0; }
void npzs__sha256_init(uint64_t *ctx) { (void)ctx; }
void npzs__sha256_update(uint64_t *ctx, const uint8_t *s, size_t n) { (void)ctx; (void)s; (void)n; }
void npzs__sha256_final(uint64_t *ctx, uint8_t out[32]) {
    (void)ctx;
    for (int i = 0; i < 32; i++) out[i] = 0;
}
#endif

NPZS__API int npzs_sha256_built(void) { return npzs__sha256_built(); }
