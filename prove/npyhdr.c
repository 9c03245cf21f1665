/* prove/npyhdr.c -- EVA driver for src/npyhdr.c: the header parser (the dict, type strings, the
 * descr grammar and the dtype tree) on any bytes, in every mode, as a v1/v2 or a v3 header, with
 * any limits, twice on one parser (the second parse meets what the first left: the type memo,
 * the kept buffers).  HDR_BIG: every length up to HDR_MAX in one buffer, with a kept scratch
 * of the size the largest of them asks for (what an earlier, larger header leaves; scratch
 * grown from none is the other unit's); else every length up to EXACT, each in a block of its
 * size, from no kept buffers at all. */
#include "drv.h"

#ifndef EXACT
#define EXACT 12
#endif
#ifndef HDR_MAX
#define HDR_MAX 4096
#endif
static npzs_parser P;
static uint8_t big[HDR_MAX];

static void parse(const uint8_t *s, size_t n) {
    int mode = Frama_C_interval(NPZS__HDR_AUTO, NPZS__HDR_FAST);
    if (mode == NPZS__HDR_AUTO) /* content.c's call */
        (void)npzs__parse_header(&P, s, n, Frama_C_interval(0, 1), u64_in(0, 1u << 20));
    else
        (void)npzs__parse_header_mode(&P, s, n, Frama_C_interval(0, 1), u64_in(0, 1u << 20), mode);
    (void)npzs__utf8_valid(s, n);
}

int main(void) {
    memset(&P, 0, sizeof P);
    any_limits(&P.lim);
    P.c.base = u64_in(0, UINT64_C(1) << 62);
#ifdef HDR_BIG
    const size_t sc_cap = 4 * HDR_MAX + 16; /* npzs__parse_header_mode's need for HDR_MAX bytes */
    P.kept.scratch = any_bytes(sc_cap);
    P.kept.scratch_cap = sc_cap;
    for (int k = 0; k < 2; k++) {
        Frama_C_make_unknown((char *)big, sizeof big);
        size_t n = size_in(0, sizeof big);
        P.err = 0;
        parse(big, n);
    }
#else
    /*@ loop unroll EXACT + 1; */
    for (size_t n = 0; n <= EXACT; n++) {
        P.err = 0;
        parse(any_bytes(n), n);
    }
#endif
    return 0;
}
