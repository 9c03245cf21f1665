/* bytes.h -- pure functions over bytes, the bottom of the library: CRC-32, SHA-256, strict UTF-8,
 * what a blob looks like.  They see no parser: a source of bytes/ that includes internal.h does
 * not compile (each checks NPZS_INTERNAL_H), and `make purity` (run by make check) says so too. */
#ifndef NPZS_BYTES_H
#define NPZS_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* crc.c: CRC-32 (zlib's polynomial), and the CRC of a || b from theirs. */
uint32_t npzs__crc32(uint32_t crc, const uint8_t *buf, size_t len);
uint32_t npzs__crc32_combine(uint32_t a, uint32_t b, uint64_t blen);
/* the implementations (crc.c's comment), for the tests and the benchmark: npzs__crc32_with(impl)
 * runs one, npzs__crc32_impls() has bit impl set for each one built here */
enum { NPZS_CRC_ZLIB = 0, NPZS_CRC_ISAL_IMPL = 1, NPZS_CRC_FOLD = 2, NPZS_CRC_IMPLS = 3 };
uint32_t npzs__crc32_with(int impl, uint32_t crc, const uint8_t *buf, size_t len);
int npzs__crc32_impls(void);
/* crcfold.c: the table-free CRC-32 of buffers of NPZS_CRC_FOLD_MIN 16-byte words or more
 * (zlib's crc32 for shorter ones) */
#define NPZS_CRC_FOLD_MIN 1024u
uint32_t npzs__crc32_fold(uint32_t crc, const uint8_t *buf, size_t len);

/* utf8.c: strict UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF): 1 if s[0 .. n) is;
 * npzs__utf8_count: 0 with *cps the code points, or -1 with *bad at the first invalid sequence */
int npzs__utf8_valid(const uint8_t *s, size_t n);
int npzs__utf8_count(const uint8_t *s, size_t n, size_t *cps, size_t *bad);
/* sniff.c: what the first n bytes of a blob look like (an npzs_sniff kind); ended: they are all of it */
int npzs__sniff(const uint8_t *b, size_t n, int ended);

/* sha256.c: SHA-256 through OpenSSL's libcrypto, loaded at the first use (built: 1 where it can be) */
#define NPZS_SHA_CTX_WORDS 16 /* room for OpenSSL's SHA256_CTX (checked in sha256.c) */
int npzs__sha256_built(void);
void npzs__sha256_init(uint64_t *ctx);
void npzs__sha256_update(uint64_t *ctx, const uint8_t *s, size_t n);
void npzs__sha256_final(uint64_t *ctx, uint8_t out[32]);

#endif
