/*
 * sha256.c -- SHA-256 of array data, from OpenSSL's libcrypto (a well-kept implementation that uses
 * the CPU's SHA instructions where it has them), when the library is built with its headers
 * (NPZS_HAVE_OPENSSL; the Makefile finds libssl-dev).  Without them every call here is a stub that
 * nothing reaches: npzs_hash and policies that hash refuse to start (npzs_sha256_built() == 0).
 *
 * libcrypto is not linked: it is loaded (dlopen) the first time SHA-256 is asked for, that is by
 * npzs_sha256_built(), which npzs_hash, the policy compiler (a policy that hashes or pins a value)
 * and the command line's --sha256 call before anything is hashed.  Linked, the run-time linker
 * mapped it and bound its 21,000 relocations at every start, hashing or not: 1.5 MiB of the
 * command's 3.5 MiB and 2.6 M of the 3.0 M instructions of checking a small file (bench/README.md,
 * issue 44).  "Built" is therefore decided at run time: 1 when this build hashes (it was compiled
 * with the headers) and libcrypto of the headers' version could be loaded with the three functions
 * below; else 0, and hashing is refused as in a build without OpenSSL, never skipped.  What is loaded
 * stays for the process (libcrypto is never unloaded): the loaded functions, written once under
 * pthread_once, are the library's one datum shared between parsers.
 *
 * The context lives in the parser's own memory (taken through the caller's hooks), so OpenSSL's
 * one-shot-free SHA256_* calls are used: they allocate nothing and keep no state outside the
 * context.  OpenSSL 3 marks them deprecated in favour of EVP, whose EVP_MD_CTX is allocated
 * through OpenSSL's process-wide allocator; both run the same code.
 */
#include "bytes.h"
#include "../base/base.h"
#include "../base/contract.h"

#ifdef NPZS_INTERNAL_H
#error "bytes/ is pure: it sees no parser (internal.h)"
#endif

#ifdef NPZS_HAVE_OPENSSL
#define OPENSSL_SUPPRESS_DEPRECATED
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <openssl/opensslv.h>
#include <openssl/sha.h>

_Static_assert(sizeof(SHA256_CTX) <= NPZS_SHA_CTX_WORDS * sizeof(uint64_t), "room for SHA256_CTX");

/* the libcrypto of the headers compiled against (its context layout is SHA256_CTX's); a build
 * may name another (-DNPZS_CRYPTO_SONAME="..."; the tests name one that does not exist) */
#define SHA_STR_(x) #x
#define SHA_STR(x) SHA_STR_(x)
#ifndef NPZS_CRYPTO_SONAME
#if defined(OPENSSL_SHLIB_VERSION)
#define NPZS_CRYPTO_SONAME "libcrypto.so." SHA_STR(OPENSSL_SHLIB_VERSION)
#else
#define NPZS_CRYPTO_SONAME "libcrypto.so." SHLIB_VERSION_NUMBER
#endif
#endif

static struct {
    int (*init)(SHA256_CTX *);
    int (*update)(SHA256_CTX *, const void *, size_t);
    int (*final)(unsigned char *, SHA256_CTX *);
    int loaded;
} sha;
static pthread_once_t sha_once = PTHREAD_ONCE_INIT;

/* a symbol of the loaded library as a function pointer (POSIX: dlsym's result converts so) */
static int sym(void *lib, const char *name, void *fn, size_t size) {
    void *s = dlsym(lib, name);
    if (s) memcpy(fn, &s, size);
    return s != NULL;
}

static void sha_load(void) {
    void *lib = dlopen(NPZS_CRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    if (sym(lib, "SHA256_Init", &sha.init, sizeof sha.init) &&
        sym(lib, "SHA256_Update", &sha.update, sizeof sha.update) &&
        sym(lib, "SHA256_Final", &sha.final, sizeof sha.final))
        sha.loaded = 1;
    else dlclose(lib);
}

int npzs__sha256_built(void) {
    pthread_once(&sha_once, sha_load);
    return sha.loaded;
}
/* reached only once npzs__sha256_built() said 1 (npzs_hash, the policy compiler); asked again
 * here for the thread that hashes, which may not be the one that asked first */
void npzs__sha256_init(uint64_t *ctx) {
    int built = npzs__sha256_built();
    NPZS_REQUIRE(built);
    (void)built;
    sha.init((SHA256_CTX *)(void *)ctx);
}
void npzs__sha256_update(uint64_t *ctx, const uint8_t *s, size_t n) { sha.update((SHA256_CTX *)(void *)ctx, s, n); }
void npzs__sha256_final(uint64_t *ctx, uint8_t out[32]) { sha.final(out, (SHA256_CTX *)(void *)ctx); }
#else
int npzs__sha256_built(void) { return 0; }
void npzs__sha256_init(uint64_t *ctx) { (void)ctx; }
void npzs__sha256_update(uint64_t *ctx, const uint8_t *s, size_t n) {
    (void)ctx;
    (void)s;
    (void)n;
}
void npzs__sha256_final(uint64_t *ctx, uint8_t out[32]) {
    (void)ctx;
    for (int i = 0; i < 32; i++) out[i] = 0;
}
#endif

NPZS__API int npzs_sha256_built(void) { return npzs__sha256_built(); }
