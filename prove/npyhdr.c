/* prove/npyhdr.c -- EVA driver for src/npy/npyhdr.c: the header parser (the dict, type strings, the
 * descr grammar and the dtype tree) on any bytes, in every mode, as a v1/v2 or a v3 header, with
 * any limits.
 *   EXACT (default): every length up to EXACT, each in a block of its size, all parsed by one
 *     parser, which starts with the pools content.c makes and no other kept buffer (each parse
 *     meets what the last left: the type memo, the kept buffers).
 *   DESCR_TAIL: the text "{'descr':" and then any bytes of every length up to DESCR_TAIL, each in
 *     a block of its size and parsed by a parser of its own (the descr grammar, which texts of
 *     EXACT bytes reach only through the analysis' approximations).
 *   TEMPLATES: whole headers with any bytes in a type string, the fortran_order value and the
 *     shape (1), or in a field's name (2), each parsed by a parser of its own.
 *   FORMS: ten whole headers, one of each form, each parsed by a parser of its own (but the
 *     second, which repeats the first on its parser): the paths to an accepted header (the dtype
 *     tree published, the names sorted, the fast path and its type memo).
 *   HDR_BIG: every length up to HDR_MAX in one buffer, parsed twice by one parser that starts
 *     with a kept scratch of the size the largest of them asks for (what an earlier, larger header
 *     leaves; scratch grown from none is EXACT's); the parser is not released at the end. */
#include "drv.h"
#include "stubs.h"
#include "view/header.h"

#ifndef EXACT
#define EXACT 12
#endif
#ifndef HDR_MAX
#define HDR_MAX 4096
#endif
/* the parser (its handle), its limits, the header parser's kept buffers and the array a parse
 * fills: the call's part of it (content.c's npzs__hdr_of) */
static npzs_parser P;
static npzs_limits L;
static npzs__hkept K;
static npzs__harray A;
static npzs__hdr X;
static uint8_t big[HDR_MAX];

static void parse(const uint8_t *s, size_t n) {
    int mode = Frama_C_interval(NPZS__HDR_AUTO, NPZS__HDR_FAST);
    X.here = u64_any();
    if (mode == NPZS__HDR_AUTO) /* content.c's call */
        (void)npzs__parse_header(&X, s, n, Frama_C_interval(0, 1), u64_in(0, 1u << 20));
    else (void)npzs__parse_header_mode(&X, s, n, Frama_C_interval(0, 1), u64_in(0, 1u << 20), mode);
    (void)npzs__utf8_valid(s, n);
}

/* a parser as npzs_new leaves it, with any limits, once content.c has made the header parser's
 * pools (their first chunks) */
static void fresh(void) {
    memset(&P, 0, sizeof P);
    memset(&K, 0, sizeof K);
    memset(&A, 0, sizeof A);
    any_limits(&L);
    X.p = &P;
    X.lim = &L;
    X.kept = &K;
    X.arr = &A;
    X.here = u64_any();
    /* content.c makes the pools' first chunks before it parses a header, and stops if it fails */
    if (npzs__header_pools(&X, u64_in(0, 1u << 20)) < 0) Frama_C_abort();
}

/* the text t in a block of its length, any byte at each \1; parsed by a parser of its own, or
 * (keep) by the one the last text left */
static void parse_text(const char *t, int keep) {
    size_t n = strlen(t);
    uint8_t *b = malloc(n);
    if (!b) Frama_C_abort();
    memcpy(b, t, n);
    /*@ loop unroll 160; */
    for (size_t i = 0; i < n; i++)
        if (b[i] == 1) Frama_C_make_unknown((char *)b + i, 1);
    if (keep) P.err = 0;
    else fresh();
    parse(b, n);
}

int main(void) {
    fresh();
#if defined FORMS
    /* whole headers of every form the grammar has, each with any limits and in every mode: the
     * paths to an accepted header (the dtype tree published, the names sorted, the fast path
     * and its memo) that texts of unknown bytes reach only past the lengths analysed */
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
    for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++)
        parse_text(forms[k], k == 1); /* the second is the first again, on its parser: the type memo's hit */
#elif defined TEMPLATES
    /* whole headers with unknown bytes at the places marked \1 (a quote, a comma or a
     * parenthesis among them ends the value early, and the rest is what follows it).
     * TEMPLATES=1: a type string of five, the fortran_order value and the shape of four each;
     * TEMPLATES=2: a field's name of two */
    static const char *const tmpl[] = {
#if TEMPLATES == 1
        "{'descr': '\1\1\1\1\1', 'fortran_order': False, 'shape': ()}",
        "{'descr': '<f8', 'fortran_order': \1\1\1\1, 'shape': (\1\1\1\1)}",
#else
        "{'descr': [('\1\1', '<i4')], 'fortran_order': False, 'shape': ()}",
#endif
    };
    /*@ loop unroll 5; */
    for (size_t k = 0; k < sizeof tmpl / sizeof tmpl[0]; k++) parse_text(tmpl[k], 0);
#elif defined DESCR_TAIL
    /* the descr grammar straight away: a dict whose first value is any bytes of every length up
     * to DESCR_TAIL, each in a block of its size */
    static const char pre[] = "{'descr':";
    /*@ loop unroll DESCR_TAIL + 1; */
    for (size_t m = 0; m <= DESCR_TAIL; m++) {
        size_t n = sizeof pre - 1 + m;
        uint8_t *b = any_bytes(n);
        memcpy(b, pre, sizeof pre - 1);
        fresh();
        parse(b, n);
    }
#elif defined HDR_BIG
    const size_t sc_cap = (size_t)4 * HDR_MAX + 16; /* npzs__parse_header_mode's need for HDR_MAX bytes */
    K.scratch = any_bytes(sc_cap);
    K.scratch_cap = sc_cap;
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
#ifndef HDR_BIG
    npzs__header_release(&X); /* what npzs_free does with scratch, the pools and the tree */
#else
        /* not the release: under HDR_BIG's allocation model (prove.py, UNIT_OPTS) the blocks one call
     * stack allocates are one abstract block, so freeing one would make the others look freed
     * (the other units, with a block per allocation, analyse it) */
#endif
    return 0;
}
