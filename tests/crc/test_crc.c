/* test_crc.c -- every CRC-32 implementation of src/bytes/crc.c against zlib's crc32, for all short
 * lengths and alignments, long buffers, split feeds and combine.  Usage: test_crc [--quick] [--only SUBSTR]
 * [--list] (the groups: each implementation by name, split, combine).  Last line "crc: N passed, M failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define NPZS_CHECK_MAIN
#include "../c/check.h"
#include "internal.h"

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static uint32_t ref(uint32_t crc, const uint8_t *b, size_t n) {
    while (n) {
        uInt k = n > 0x40000000u ? 0x40000000u : (uInt)n;
        crc = (uint32_t)crc32(crc, b, k);
        b += k;
        n -= k;
    }
    return crc;
}

static void check(const char *what, int impl, size_t len, size_t align, uint32_t got, uint32_t want) {
    CHECK(got == want, "%s impl %d len %zu align %zu: %08x != zlib %08x", what, impl, len, align, got, want);
}

int main(int argc, char **argv) {
    if (check_args(&argc, argv)) return 2;
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    size_t big = (size_t)(quick ? 1 : 9) << 20;
    uint8_t *buf = malloc(big + 64);
    if (!buf) return 2;
    for (size_t i = 0; i < big + 64; i++) buf[i] = (uint8_t)rnd();
    int impls = npzs__crc32_impls();
    static const char *const names[NPZS_CRC_IMPLS] = {"zlib", "isa-l", "fold"};
    printf("implementations here:");
    for (int impl = 0; impl < NPZS_CRC_IMPLS; impl++)
        if (impls & 1 << impl) printf(" %s", names[impl]);
    printf("\n");
    if (!(impls & 1 << NPZS_CRC_FOLD)) return 2;
    size_t maxlen = quick ? 700 : 2100;
    for (int impl = 0; impl < NPZS_CRC_IMPLS; impl++) {
        if (!(impls & 1 << impl) || !check_group(names[impl])) continue;
        for (size_t align = 0; align < 64; align += quick ? 7 : 1)
            for (size_t len = 0; len <= maxlen; len++) {
                uint32_t init = len & 1 ? rnd() : 0;
                check("short", impl, len, align, npzs__crc32_with(impl, init, buf + align, len),
                      ref(init, buf + align, len));
            }
        /* all-zero and all-one data (carry-less edge cases) */
        uint8_t *z = calloc(1, 4096);
        if (!z) return 2;
        for (size_t len = 0; len <= 4096; len += 61) {
            check("zeros", impl, len, 0, npzs__crc32_with(impl, 0, z, len), ref(0, z, len));
            check("zeros-ffff", impl, len, 0, npzs__crc32_with(impl, 0xFFFFFFFFu, z, len), ref(0xFFFFFFFFu, z, len));
        }
        memset(z, 0xFF, 4096);
        for (size_t len = 0; len <= 4096; len += 61)
            check("ones", impl, len, 0, npzs__crc32_with(impl, 0, z, len), ref(0, z, len));
        free(z);
        /* the fold's lengths: from below its threshold through 600 more words, so that the
         * residual starts at every slot of its ring of 512 and the bytes after the last whole
         * word number 0 to 15; long runs of zeros and ones */
        for (size_t nw = NPZS_CRC_FOLD_MIN - 2; nw < NPZS_CRC_FOLD_MIN + (quick ? 40 : 600); nw++) {
            size_t len = 16 * nw + nw % 17 % 16, align = nw % 13;
            uint32_t init = rnd();
            check("fold", impl, len, align, npzs__crc32_with(impl, init, buf + align, len),
                  ref(init, buf + align, len));
        }
        uint8_t *zz = calloc(1, 100000);
        if (!zz) return 2;
        check("fold-zeros", impl, 100000, 0, npzs__crc32_with(impl, 0, zz, 100000), ref(0, zz, 100000));
        check("fold-zeros-ffff", impl, 99999, 0, npzs__crc32_with(impl, 0xFFFFFFFFu, zz, 99999),
              ref(0xFFFFFFFFu, zz, 99999));
        memset(zz, 0xFF, 100000);
        check("fold-ones", impl, 100000, 0, npzs__crc32_with(impl, 0, zz, 100000), ref(0, zz, 100000));
        free(zz);
        /* long buffers, odd lengths and offsets */
        for (int k = 0; k < (quick ? 3 : 12); k++) {
            size_t len = big - (size_t)(rnd() % 4099), align = rnd() % 64;
            uint32_t init = rnd();
            check("long", impl, len, align, npzs__crc32_with(impl, init, buf + align, len),
                  ref(init, buf + align, len));
        }
    }
    /* the dispatching entry point: random splits give the whole-buffer CRC */
    if (check_group("split")) {
        uint32_t whole = ref(0, buf, big);
        for (int k = 0; k < (quick ? 20 : 200); k++) {
            uint32_t c = 0;
            size_t pos = 0;
            while (pos < big) {
                size_t n = (rnd() & 1) ? rnd() % 300 : rnd() % (1u << (rnd() % 21));
                if (n > big - pos) n = big - pos;
                c = npzs__crc32(c, buf + pos, n);
                pos += n;
            }
            check("split", -1, big, 0, c, whole);
        }
    }
    /* combine: short second parts (zero-run path), long ones (zlib's) */
    if (check_group("combine")) {
        for (int k = 0; k < 600; k++) {
            size_t a = rnd() % (big / 2), b = k < 400 ? (size_t)k * 3 % 1100 : rnd() % (big / 2);
            uint32_t ca = npzs__crc32(0, buf, a), cb = npzs__crc32(0, buf + a, b);
            check("combine", -1, a + b, 0, npzs__crc32_combine(ca, cb, b), ref(0, buf, a + b));
        }
    }
    free(buf);
    return check_done("crc");
}
