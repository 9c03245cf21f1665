/* prove/npyhdr.c -- EVA driver for src/npyhdr.c: the header parser (the dict, type strings, the
 * descr grammar and the dtype tree) on any bytes, in every mode, as a v1/v2 or a v3 header, with
 * any limits, twice on one parser (the second parse meets what the first left: the type memo,
 * the kept buffers).  HDR_BIG: every length up to HDR_MAX in one buffer, with a kept scratch
 * of the size the largest of them asks for (what an earlier, larger header leaves; scratch
 * grown from none is the other unit's); else every length up to EXACT, each in a block of its
 * size, from no kept buffers at all.  DESCR_TAIL: the text "{'descr':" and then any bytes of
 * every length up to DESCR_TAIL, each in a block of its size (the descr grammar, which texts of
 * EXACT bytes reach only through the analysis' approximations).  FORMS: ten whole headers, one
 * of each form, with any limits. */
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
#if defined FORMS
    /* whole headers of every form the grammar has, each with any limits and in every mode: the
     * paths to an accepted header (the dtype tree published, the names sorted, the fast path
     * and its memo) that texts of unknown bytes reach only past the lengths analysed above */
    static const char *const forms[] = {
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }          \n",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }          \n",
        "{'descr': '|u1', 'fortran_order': True, 'shape': (7,), }\n",
        "{'descr': '<M8[5us]', 'shape': (), 'fortran_order': False}",
        "{'descr': [('a', '<i4'), ('b', '<f8', (2, 3)), ('', '|V4')], 'fortran_order': False, 'shape': (2,)}",
        "{'descr': [(('t', 'n'), '>u2'), ('s', [('x', '|S0', 5), ('y', ('<U0', 2))])], 'fortran_order': False, 'shape': ()}",
        "{'descr': [('a', ('<i2', (2,))), ('b', [('c', '|b1', 3)])], 'fortran_order': False, 'shape': (1, 0)}",
        "{'descr': [('a', '<i4'), ('a', '<i4')], 'fortran_order': False, 'shape': ()}",
        "{'descr': [('z', '<i4'), ('y', '<i4'), ('x', '<i4'), ('w', '|O')], 'fortran_order': False, 'shape': ()}",
        "{'descr': [('\\u00e9', '<c16'), ('\\x41', '<m8[D]')], 'fortran_order': False, 'shape': (4,)}",
    };
    /*@ loop unroll 11; */
    for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        size_t n = strlen(forms[k]);
        uint8_t *b = malloc(n);
        if (!b) Frama_C_abort();
        memcpy(b, forms[k], n);
        P.err = 0;
        parse(b, n);
    }
#elif defined DESCR_TAIL
    /* the descr grammar straight away: a dict whose first value is any bytes of every length up
     * to DESCR_TAIL, each in a block of its size */
    static const char pre[] = "{'descr':";
    /*@ loop unroll DESCR_TAIL + 1; */
    for (size_t m = 0; m <= DESCR_TAIL; m++) {
        size_t n = sizeof pre - 1 + m;
        uint8_t *b = any_bytes(n);
        memcpy(b, pre, sizeof pre - 1);
        P.err = 0;
        parse(b, n);
    }
#elif defined HDR_BIG
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
