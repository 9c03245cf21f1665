/* tests/api/names.c -- the member-name checks against plain references: the name table's
 * SipHash-1-3, and npzs__zr_name's word-at-a-time scan against its per-byte rules. */
#include <stdio.h>
#include <string.h>

#include "api.h"

/* The name table's hash is SipHash-1-3; CPython 3.11+ hashes bytes with the same function, whose
 * key is all zeros under PYTHONHASHSEED=0: these are hash(b"abc"), hash(bytes(range(15))) and
 * hash(bytes(range(64))) there (as unsigned 64-bit), an independent implementation's vectors. */
/* SipHash-1-3 as its paper gives it, the last block read byte by byte */
#define REF_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define REF_ROUND(v0, v1, v2, v3) \
    do { \
        v0 += v1; \
        v1 = REF_ROTL(v1, 13); \
        v1 ^= v0; \
        v0 = REF_ROTL(v0, 32); \
        v2 += v3; \
        v3 = REF_ROTL(v3, 16); \
        v3 ^= v2; \
        v0 += v3; \
        v3 = REF_ROTL(v3, 21); \
        v3 ^= v0; \
        v2 += v1; \
        v1 = REF_ROTL(v1, 17); \
        v1 ^= v2; \
        v2 = REF_ROTL(v2, 32); \
    } while (0)
static uint64_t ref_siphash13(const uint64_t k[2], const uint8_t *m, size_t n) {
    uint64_t v0 = k[0] ^ UINT64_C(0x736f6d6570736575), v1 = k[1] ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = k[0] ^ UINT64_C(0x6c7967656e657261), v3 = k[1] ^ UINT64_C(0x7465646279746573);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = 0;
        for (unsigned b = 0; b < 8; b++) w |= (uint64_t)m[i + b] << (8 * b);
        v3 ^= w;
        REF_ROUND(v0, v1, v2, v3);
        v0 ^= w;
    }
    uint64_t last = (uint64_t)(n & 0xFF) << 56;
    for (size_t b = 0; i + b < n; b++) last |= (uint64_t)m[i + b] << (8 * b);
    v3 ^= last;
    REF_ROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xFF;
    REF_ROUND(v0, v1, v2, v3);
    REF_ROUND(v0, v1, v2, v3);
    REF_ROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

void test_siphash(void) {
    static const uint64_t zero[2] = {0, 0};
    uint8_t m[64];
    for (int i = 0; i < 64; i++) m[i] = (uint8_t)i;
    CHECK(npzs__siphash13(zero, (const uint8_t *)"abc", 3) == UINT64_C(13851880170939887858), "siphash 'abc'");
    CHECK(npzs__siphash13(zero, m, 15) == UINT64_C(17514137373579004394), "siphash 15 bytes");
    CHECK(npzs__siphash13(zero, m, 64) == UINT64_C(8493894268803903686), "siphash 64 bytes");
    /* every length and alignment against the plain byte-by-byte reading of the last block */
    static const uint64_t key[2] = {UINT64_C(0x0706050403020100), UINT64_C(0x0F0E0D0C0B0A0908)};
    int ok = 1;
    for (size_t at = 0; at < 8; at++)
        for (size_t n = 0; n + at <= 64; n++) {
            uint64_t want = ref_siphash13(key, m + at, n), got = npzs__siphash13(key, m + at, n);
            if (want != got) {
                ok = 0;
                printf("  siphash at %zu, %zu bytes\n", at, n);
            }
        }
    CHECK(ok, "siphash: a length or alignment differs from the reference");
    /* two parsers draw different keys */
    npzs_parser *a = npzs_new(NULL, NULL), *b = npzs_new(NULL, NULL);
    CHECK(a && b && (a->ntab.key[0] != b->ntab.key[0] || a->ntab.key[1] != b->ntab.key[1]),
          "two parsers share a name-table key");
    npzs_free(a);
    npzs_free(b);
}


/* npzs__zr_name skips its per-byte loop when a word-at-a-time scan finds none of the bytes that
 * loop looks at: against the loop run on every name (this reference), over names of 0 to 40
 * bytes drawn from the bytes on either side of each class boundary, every position of a
 * special byte and of two dots in a row inside and across 8-byte words. */
static int ref_name(const uint8_t *s, size_t n, unsigned flags, npzs__zerr *e) {
    int ascii = 1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == 0) return e->rule = NPZS_R_NAME_NUL, -1;
        if (s[i] < 0x20 || s[i] == 0x7F) return e->rule = NPZS_R_NAME_CONTROL, -1;
        if (s[i] == '\\') return e->rule = NPZS_R_NAME_BACKSLASH, -1;
        if (s[i] >= 0x80) ascii = 0;
        if (s[i] == '.' && i + 1 < n && s[i + 1] == '.' && (i == 0 || s[i - 1] == '/') &&
            (i + 2 == n || s[i + 2] == '/'))
            return e->rule = NPZS_R_NAME_DOTDOT, -1;
    }
    if (s[0] == '/') return e->rule = NPZS_R_NAME_ABSOLUTE, -1;
    if (n == 4 && memcmp(s, ".npy", 4) == 0) return e->rule = NPZS_R_NAME_EMPTY_KEY, -1;
    if (s[n - 1] == '/') return e->rule = NPZS_R_NAME_DIRECTORY, -1;
    if (!ascii && !(flags & 0x0800u)) return e->rule = NPZS_R_NAME_CP437, -1;
    if (!ascii && !npzs__utf8_valid(s, n)) return e->rule = NPZS_R_NAME_UTF8, -1;
    return 0;
}

void test_zr_name(void) {
    static const uint8_t pick[] = {0x00, 0x01, 0x1F, 0x20, 'a',  '.',  '/',  '\\',
                                   0x5B, 0x5D, 0x7E, 0x7F, 0x80, 0xC3, 0xA9, 0xFF};
    uint8_t s[48];
    uint32_t seed = 12345;
    long bad = 0, runs = 0, slow = 0;
    for (size_t n = 1; n <= 40; n++) {
        /* one or two special bytes (or two dots) at every position among plain letters */
        for (size_t a = 0; a < n; a++)
            for (size_t k = 0; k < sizeof pick; k++) {
                memset(s, 'a', n);
                s[a] = pick[k];
                if (a + 1 < n && k == 5) { /* "/../" */
                    s[a + 1] = '.';
                    if (a) s[a - 1] = '/';
                    if (a + 2 < n) s[a + 2] = '/';
                }
                for (unsigned fl = 0; fl <= 0x800u; fl += 0x800u) {
                    npzs__zerr e1 = {0, 0}, e2 = {0, 0};
                    int r1 = npzs__zr_name(s, n, fl, &e1), r2 = ref_name(s, n, fl, &e2);
                    runs++;
                    if (r1 != r2 || (r1 && e1.rule != e2.rule)) bad++;
                }
            }
        /* random names from the same bytes */
        for (int t = 0; t < 2000; t++) {
            for (size_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                s[i] = (seed >> 16) % 4 ? (uint8_t)('a' + (seed >> 20) % 3) : pick[(seed >> 24) % sizeof pick];
            }
            npzs__zerr e1 = {0, 0}, e2 = {0, 0};
            int r1 = npzs__zr_name(s, n, 0x800u, &e1), r2 = ref_name(s, n, 0x800u, &e2);
            runs++;
            slow += r2 != 0;
            if (r1 != r2 || (r1 && e1.rule != e2.rule)) bad++;
        }
    }
    CHECK(bad == 0, "npzs__zr_name differs from its per-byte rules on %ld of %ld names", bad, runs);
    CHECK(slow > 1000, "too few rejected names drawn (%ld)", slow);
}
