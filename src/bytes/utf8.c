/*
 * utf8.c -- strict UTF-8, the one reading of it: a member's name (zrec.c), a header's text
 * (npyhdr.c), a policy's strings (json.c), a blob's sniff (sniff.c).
 */
#include "bytes.h"
#include "../base/base.h"
#include "../base/contract.h"

#ifdef NPZS_INTERNAL_H
#error "bytes/ is pure: it sees no parser (internal.h)"
#endif

/* Strict UTF-8 (no overlongs, no surrogates, <= U+10FFFF).  Returns 0 with *cps the code
 * point count, or -1 with *bad at the first byte of the invalid sequence. */
int npzs__utf8_count(const uint8_t *s, size_t n, size_t *cps, size_t *bad) {
    size_t i = 0, count = 0;
    while (i < n) {
        uint8_t b = s[i];
        size_t k;
        uint32_t cp;
        if (b < 0x80) {
            i++;
            count++;
            continue;
        }
        if (b >= 0xC2 && b <= 0xDF) {
            k = 1;
            cp = b & 0x1Fu;
        } else if (b >= 0xE0 && b <= 0xEF) {
            k = 2;
            cp = b & 0x0Fu;
        } else if (b >= 0xF0 && b <= 0xF4) {
            k = 3;
            cp = b & 0x07u;
        } else {
            *bad = i;
            return -1;
        }
        for (size_t j = 1; j <= k; j++) {
            size_t at = i + j;
            if (at >= n || (s[at] & 0xC0) != 0x80) {
                *bad = i;
                return -1;
            }
            cp = (cp << 6) | (s[at] & 0x3Fu);
        }
        if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) {
            *bad = i;
            return -1;
        }
        i += k + 1;
        count++;
    }
    *cps = count;
    return 0;
}

/*@ requires n == 0 || \valid_read(s + (0 .. n - 1)); */
int npzs__utf8_valid(const uint8_t *s, size_t n) {
    NPZS_REQUIRE(s || n == 0);
    size_t cps, bad;
    return npzs__utf8_count(s, n, &cps, &bad) == 0;
}
