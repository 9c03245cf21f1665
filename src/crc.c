/*
 * crc.c -- CRC-32 (the ZIP/zlib polynomial, reflected, 0xEDB88320), one place for the whole library.
 *
 * Three implementations, chosen per call from what the CPU offers (no state is kept):
 *   2  VPCLMULQDQ + AVX-512: four 512-bit accumulators fold 256 bytes per step;
 *   1  PCLMULQDQ + SSE4.1:   four 128-bit accumulators fold 64 bytes per step;
 *   0  portable:             zlib's crc32() (table driven, "braided"), also used for short
 *                            buffers and for the last < 16 bytes.
 * Build with -DNPZS_CRC_PORTABLE (make NPZS_CRC_PORTABLE=1) to compile only the portable one.
 *
 * How the folding works.  A little-endian 128-bit lane V read from the message stands for
 * the polynomial sum v_i x^(127-i) (bit 0 of byte 0 is the highest power: the reflected
 * convention).  Split V = L x^64 + H into its low and high 64-bit halves.  Moving V forward
 * by D bits (to xor it onto the lane that ends D bits later) means multiplying by x^D mod P:
 *     V x^D  ==  L (x^(D+64) mod P) + H (x^D mod P)      (mod P)
 * A carry-less multiply of two reflected 64-bit values yields x*A*B as a reflected 128-bit
 * value, so the constants are x^(D+63) mod P and x^(D-1) mod P, bit-reversed into the top
 * 32 bits of a 64-bit word (they are of degree < 32, the products fit in 128 bits).
 * The CRC register (inverted, as zlib keeps it) is xored into the first four bytes; at the
 * end the one remaining lane is itself a 16-byte message whose CRC from a zero register is
 * the folded state's remainder, reduced to 32 bits by crc_finish (Barrett); zlib's crc32
 * takes the last < 16 bytes.
 * The constants below were computed with that recipe (polynomial 0x104C11DB7);
 * tests/crc checks every path against zlib for all short lengths and alignments.
 */
#include "internal.h"

uint32_t npzs__crc32_with(int impl, uint32_t crc, const uint8_t *buf, size_t len);
int npzs__crc32_impls(void);

/* zlib's crc32 takes uInt lengths */
static uint32_t crc_portable(uint32_t crc, const uint8_t *buf, size_t len) {
    while (len) {
        uInt n = len > 0x40000000u ? 0x40000000u : (uInt)len;
        crc = (uint32_t)crc32(crc, buf, n);
        buf += n;
        len -= n;
    }
    return crc;
}

#if !defined(NPZS_CRC_PORTABLE) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NPZS_CRC_X86 1
#include <immintrin.h>

/* pairs { x^(D+63) mod P, x^(D-1) mod P }, reflected, for a fold distance of D bits */
static const uint64_t K128[2] = {UINT64_C(0x65673b4600000000), UINT64_C(0x9ba54c6f00000000)};
static const uint64_t K512[2] = {UINT64_C(0x653d982200000000), UINT64_C(0xcad38e8f00000000)};
static const uint64_t K2048[2] = {UINT64_C(0x7cc8e1e700000000), UINT64_C(0x03f9f86300000000)};

/* Reduction of the last lane x (M, 128 bits) to the register M x^32 mod P:
 *   128 -> 96 bits:  M = H x^64 + L:  H x^96 + L x^32  ==  clmul(H, x^95) + L x^32
 *   96 -> 64 bits:   T = E x^64 + F:  E x^64 + F  ==  clmul(E, x^63) + F
 *   64 -> 32 bits:   Barrett, q = floor(floor(G / x^32) mu / x^32) with mu = floor(x^64 / P),
 *                    G mod P = (G + q P) mod x^32
 * (clmul yields x A B, which the constants' exponents account for; mu and P are placed as
 * mu x^31 and P x^31 so that q and the low half of q P land where they are read.) */
static const uint64_t K95 = UINT64_C(0xccaa009e00000000);  /* x^95 mod P */
static const uint64_t K63 = UINT64_C(0xb8bc676500000000);  /* x^63 mod P */
static const uint64_t KMU = UINT64_C(0x1f7011641);         /* floor(x^64 / P), 33 bits */
static const uint64_t KP = UINT64_C(0x1db710641);          /* P, 33 bits */

/* the state is one 16-byte lane: its CRC, then the tail bytes */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc_finish(__m128i x, const uint8_t *tail, size_t n) {
    __m128i t = _mm_xor_si128(_mm_clmulepi64_si128(x, _mm_cvtsi64_si128((long long)K95), 0x00),
                              _mm_slli_si128(_mm_srli_si128(x, 8), 4));
    __m128i u = _mm_clmulepi64_si128(t, _mm_cvtsi64_si128((long long)K63), 0x00);
    uint64_t g = (uint64_t)_mm_extract_epi64(t, 1) ^ (uint64_t)_mm_extract_epi64(u, 1);
    __m128i q = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)(g & 0xFFFFFFFFu)),
                                     _mm_cvtsi64_si128((long long)KMU), 0x00);
    uint64_t w = (uint64_t)_mm_cvtsi128_si64(q) & 0xFFFFFFFFu;
    __m128i qp = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)w), _mm_cvtsi64_si128((long long)KP), 0x00);
    uint32_t c = ~(uint32_t)((g ^ (uint64_t)_mm_cvtsi128_si64(qp)) >> 32); /* zlib keeps it inverted */
    return n ? crc_portable(c, tail, n) : c;
}

#define FOLD128(x, k, next)                                                                     \
    _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128((x), (k), 0x00), _mm_clmulepi64_si128((x), (k), 0x11)), \
                  (next))

/* len >= 64 */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc_pclmul(uint32_t crc, const uint8_t *p, size_t n) {
    const __m128i k512 = _mm_loadu_si128((const __m128i *)(const void *)K512);
    const __m128i k128 = _mm_loadu_si128((const __m128i *)(const void *)K128);
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)p), _mm_cvtsi32_si128((int)~crc));
    __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
    p += 64;
    n -= 64;
    while (n >= 64) {
        x0 = FOLD128(x0, k512, _mm_loadu_si128((const __m128i *)(const void *)p));
        x1 = FOLD128(x1, k512, _mm_loadu_si128((const __m128i *)(const void *)(p + 16)));
        x2 = FOLD128(x2, k512, _mm_loadu_si128((const __m128i *)(const void *)(p + 32)));
        x3 = FOLD128(x3, k512, _mm_loadu_si128((const __m128i *)(const void *)(p + 48)));
        p += 64;
        n -= 64;
    }
    __m128i x = FOLD128(x0, k128, x1);
    x = FOLD128(x, k128, x2);
    x = FOLD128(x, k128, x3);
    while (n >= 16) {
        x = FOLD128(x, k128, _mm_loadu_si128((const __m128i *)(const void *)p));
        p += 16;
        n -= 16;
    }
    return crc_finish(x, p, n);
}

#define VPCLMUL_TARGET "avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1"
#define FOLD512(x, k, next)                                                                     \
    _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128((x), (k), 0x00),                          \
                              _mm512_clmulepi64_epi128((x), (k), 0x11), (next), 0x96)

/* len >= 256 */
__attribute__((target(VPCLMUL_TARGET))) static uint32_t crc_vpclmul(uint32_t crc, const uint8_t *p, size_t n) {
    const __m512i k2048 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)K2048));
    const __m512i k512 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)K512));
    const __m128i k128 = _mm_loadu_si128((const __m128i *)(const void *)K128);
    __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512((const void *)p),
                                  _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)~crc)));
    __m512i x1 = _mm512_loadu_si512((const void *)(p + 64));
    __m512i x2 = _mm512_loadu_si512((const void *)(p + 128));
    __m512i x3 = _mm512_loadu_si512((const void *)(p + 192));
    p += 256;
    n -= 256;
    while (n >= 256) {
        x0 = FOLD512(x0, k2048, _mm512_loadu_si512((const void *)p));
        x1 = FOLD512(x1, k2048, _mm512_loadu_si512((const void *)(p + 64)));
        x2 = FOLD512(x2, k2048, _mm512_loadu_si512((const void *)(p + 128)));
        x3 = FOLD512(x3, k2048, _mm512_loadu_si512((const void *)(p + 192)));
        p += 256;
        n -= 256;
    }
    __m512i x = FOLD512(x0, k512, x1);
    x = FOLD512(x, k512, x2);
    x = FOLD512(x, k512, x3);
    while (n >= 64) {
        x = FOLD512(x, k512, _mm512_loadu_si512((const void *)p));
        p += 64;
        n -= 64;
    }
    __m128i y = FOLD128(_mm512_extracti32x4_epi32(x, 0), k128, _mm512_extracti32x4_epi32(x, 1));
    y = FOLD128(y, k128, _mm512_extracti32x4_epi32(x, 2));
    y = FOLD128(y, k128, _mm512_extracti32x4_epi32(x, 3));
    while (n >= 16) {
        y = FOLD128(y, k128, _mm_loadu_si128((const __m128i *)(const void *)p));
        p += 16;
        n -= 16;
    }
    return crc_finish(y, p, n);
}

/* what the CPU (and the OS, for the AVX-512 state) allows; libgcc/compiler-rt fill this in
 * before constructors run */
static int have_pclmul(void) { return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"); }
static int have_vpclmul(void) {
    return have_pclmul() && __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512vl");
}
#endif

/* Bitmask of the implementations usable here (bit i: implementation i). */
int npzs__crc32_impls(void) {
#ifdef NPZS_CRC_X86
    return 1 | (have_pclmul() ? 2 : 0) | (have_vpclmul() ? 4 : 0);
#else
    return 1;
#endif
}

/* One implementation, for the tests and the benchmark (falls back to a lower one for
 * lengths it does not handle, or when it is not available). */
uint32_t npzs__crc32_with(int impl, uint32_t crc, const uint8_t *buf, size_t len) {
#ifdef NPZS_CRC_X86
    if (impl >= 2 && len >= 256 && have_vpclmul()) return crc_vpclmul(crc, buf, len);
    if (impl >= 1 && len >= 64 && have_pclmul()) return crc_pclmul(crc, buf, len);
#else
    (void)impl;
#endif
    return crc_portable(crc, buf, len);
}

uint32_t npzs__crc32(uint32_t crc, const uint8_t *buf, size_t len) {
#ifdef NPZS_CRC_X86
    if (len >= 256 && have_vpclmul()) return crc_vpclmul(crc, buf, len);
    if (len >= 64 && have_pclmul()) return crc_pclmul(crc, buf, len);
#endif
    return crc_portable(crc, buf, len);
}

/* CRC of A||B from crc(A), crc(B) and |B|.  combine(a, b, n) is shift_n(a) ^ b, where
 * shift_n(a), a times x^(8n) mod P, is also the CRC register a run over n zero bytes:
 * for the short members of a many-member archive that costs ~100 instructions against ~800
 * for zlib's square-and-multiply.  Longer lengths use zlib; a length that does not fit
 * z_off_t is applied in steps with b = 0. */
#define ZEROS 1024
static const uint8_t zeros[ZEROS];

uint32_t npzs__crc32_combine(uint32_t a, uint32_t b, uint64_t blen) {
    if (blen <= ZEROS) return ~npzs__crc32(~a, zeros, (size_t)blen) ^ b;
    const uint64_t step = 0x40000000u;
    while (blen > step) {
        a = (uint32_t)crc32_combine(a, 0, (z_off_t)step);
        blen -= step;
    }
    return (uint32_t)crc32_combine(a, b, (z_off_t)blen);
}
