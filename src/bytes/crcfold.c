/*
 * crcfold.c -- CRC-32 (the ZIP/zlib polynomial, reflected) of long buffers without tables or
 * carry-less multiplies: the CRC where the machine has neither (WebAssembly; a build without
 * ISA-L), about 3x zlib's table-driven crc32 here, natively and in wasm (bench/README.md).
 *
 * The method (S. Russell's "Chorba", 2024): a polynomial Z(x) with Z mod G = 0, G the CRC
 * polynomial, adds nothing to the remainder, so a message keeps its CRC when any shift of Z is
 * XORed into it.  Z(x) = x^300 + x^155 + x^117 + x^89 + 1 is one (prove it with the Python of
 * tests/crc/test_zero_poly.py), and so is Z(x)^128 = Z(x^128), whose terms are 128 bits -- one
 * 16-byte word -- apart times 300, 155, 117, 89 and 0.  Choosing the shift of Z that cancels
 * word j of the message (a reflected CRC reads the first byte as the highest degree) moves
 * word j, unchanged, into the words j + 145, j + 183, j + 211 and j + 300 and leaves word j
 * zero.  Cancelling every word but the last 300 in order, each word as it stands after the
 * earlier ones were moved into it,
 *
 *     v[j] = m[j] ^ v[j - 145] ^ v[j - 183] ^ v[j - 211] ^ v[j - 300]
 *
 * (terms with a negative index or an index not cancelled left out), leaves a message of zeros
 * followed by 300 words whose CRC from a zero register is the whole buffer's.  Zeros leave a
 * zero register as they found it, so only the CRC's starting register needs care: a reflected
 * CRC register c run over bytes b equals a zero register run over b with c XORed into its
 * first four bytes (little-endian).  Every v[j] needs words 145 to 300 back: a history of the
 * last 300 followed by a block of 1,024 (on the stack, 21 KiB) holds them, the reads at fixed
 * distances behind the write (no index arithmetic), the last 300 moved to the front after each
 * block.  zlib's crc32 runs over the residual (the last 300 words, 4,800 bytes) and the bytes
 * after the last whole word; below NPZS_CRC_FOLD_MIN words (16 KiB: base.h) zlib's crc32, as
 * fast there, runs over everything.
 */
#include <string.h>

#include <zlib.h>

#include "bytes.h"
#include "../base/base.h"
#include "../base/contract.h"

#ifdef NPZS_INTERNAL_H
#error "bytes/ is pure: it sees no parser (internal.h)"
#endif

#define FOLD_K1 145u     /* 300 - 155 */
#define FOLD_K2 183u     /* 300 - 117 */
#define FOLD_K3 211u     /* 300 - 89 */
#define FOLD_K4 300u     /* Z's degree: the words left for zlib */
#define FOLD_BLOCK 1024u /* words cancelled between two moves of the history */

typedef struct {
    uint64_t lo, hi;
} fold_word;

static inline fold_word fx(fold_word a, fold_word b) {
    a.lo ^= b.lo;
    a.hi ^= b.hi;
    return a;
}

/* zlib's crc32 takes uInt lengths; every length here is under 16 KiB + 16 */
static uint32_t zcrc(uint32_t crc, const uint8_t *b, size_t n) { return (uint32_t)crc32(crc, b, (uInt)n); }

/*@ requires len == 0 || \valid_read(buf + (0 .. len - 1)); */
uint32_t npzs__crc32_fold(uint32_t crc, const uint8_t *buf, size_t len) {
    NPZS_REQUIRE(buf || len == 0);
    size_t nw = len / 16u;
    if (nw < NPZS_CRC_FOLD_MIN) {
        /* short: zlib's (at most 16 KiB + 15 bytes here) */
        return len ? zcrc(crc, buf, len) : crc;
    }
    /* h[0 .. K4): the last K4 words cancelled before the block (zero before the first word);
     * h[K4 + p]: the block's word p.  The reads are at fixed distances behind the write. */
    fold_word h[FOLD_K4 + FOLD_BLOCK];
    memset(h, 0, sizeof h);
    size_t lw = nw - FOLD_K4; /* the words cancelled */
    /* word 0, with the starting register XORed into its first four bytes (nothing comes before
     * it), then words 1 .. lw - 1 */
    uint8_t w0[16];
    memcpy(w0, buf, 16);
    uint32_t reg = ~crc;
    for (unsigned k = 0; k < 4; k++) w0[k] ^= (uint8_t)(reg >> (8 * k));
    memcpy(&h[FOLD_K4], w0, 16);
    size_t p = 1; /* the block's next word */
    const uint8_t *q = buf + 16, *end = buf + 16u * lw;
    while (q < end) {
        for (; p < FOLD_BLOCK && q < end; p++, q += 16) {
            fold_word v;
            memcpy(&v, q, 16);
            v = fx(v, h[FOLD_K4 + p - FOLD_K1]);
            v = fx(v, h[FOLD_K4 + p - FOLD_K2]);
            v = fx(v, h[FOLD_K4 + p - FOLD_K3]);
            v = fx(v, h[p]);
            h[FOLD_K4 + p] = v;
        }
        if (p == FOLD_BLOCK) {
            memmove(h, h + FOLD_BLOCK, FOLD_K4 * sizeof *h); /* the last K4 words to the front */
            p = 0;
        }
    }
    memmove(h, h + p, FOLD_K4 * sizeof *h); /* the last K4 cancelled words to the front */
    /* the residual: words lw .. nw - 1, with what the cancelled words (below lw) moved in: word
     * lw + k takes word lw + k - K if that is below lw, i.e. if k < K; h[0 .. K4) holds words
     * lw - K4 .. lw - 1, so word lw + k - K is h[K4 + k - K].  The residual is written after
     * them (h[K4 + k], never read here). */
    fold_word *res = h + FOLD_K4;
    for (size_t k = 0; k < FOLD_K4; k++) {
        fold_word v;
        memcpy(&v, buf + 16u * (lw + k), 16);
        if (k < FOLD_K1) v = fx(v, h[FOLD_K4 + k - FOLD_K1]);
        if (k < FOLD_K2) v = fx(v, h[FOLD_K4 + k - FOLD_K2]);
        if (k < FOLD_K3) v = fx(v, h[FOLD_K4 + k - FOLD_K3]);
        v = fx(v, h[k]);
        res[k] = v;
    }
    /* zlib from a zero register (crc32's argument is the register inverted) over the residual,
     * then the bytes after the last whole word, one at a time (at most 15: each read is then
     * seen below len by the proof's analysis) */
    uint32_t c = zcrc(0xFFFFFFFFu, (const uint8_t *)res, FOLD_K4 * sizeof *res);
    for (size_t i = 16u * nw; i < len; i++) c = zcrc(c, buf + i, 1);
    return c;
}
