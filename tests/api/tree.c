/* tests/api/tree.c -- the structured dtype's tree and the pools it is made in (src/npy/npyhdr.c):
 * trees of 40,000 fields, a tree that grows, the pools' first chunks, a pool that is full; every
 * allocation failing in turn where it can. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

/* A v2.0 .npy of the header text `t` (padded as NumPy pads), no data; free() it. */
static uint8_t *npy2_of(const char *t, size_t *len) { return npy_v(t, 2, 0, len); }

/* The header of `f` through parser p (reset first): its array info, or NULL with the error set. */
static const npzs_array_info *header_of(npzs_parser *p, const uint8_t *f, size_t len) {
    npzs_reset(p);
    npzs_in in = {f, len, 0};
    npzs_finish(p);
    npzs_event ev;
    int rc;
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT)
        if (ev.type == NPZS_EV_HEADER) return ev.array;
    return NULL;
}

/* A structured dtype of n fields of four kinds in turn (a plain type; a datetime of a varying
 * unit with a shape; a zero-width string given its width; a subarray of 1 to 6 dimensions as
 * the type), every seventh field titled: the header text, and what NumPy makes of field k. */
typedef struct big_field {
    char name[16], title[16], dtype[24];
    uint64_t offset, itemsize, dims[6];
    uint32_t ndim; /* 0: the field's type is the scalar dtype */
} big_field;

static char *big_descr(uint32_t n, big_field *fl) {
    size_t cap = (size_t)n * 96 + 128, at = 0;
    char *t = malloc(cap);
    uint64_t off = 0;
    at += (size_t)snprintf(t + at, cap - at, "{'descr': [");
    for (uint32_t k = 0; k < n; k++) {
        big_field *b = &fl[k];
        memset(b, 0, sizeof *b);
        snprintf(b->name, sizeof b->name, "f%u", k);
        if (k % 7 == 0) snprintf(b->title, sizeof b->title, "t%u", k);
        char nm[40];
        if (k % 7 == 0) snprintf(nm, sizeof nm, "('%s', '%s')", b->title, b->name);
        else snprintf(nm, sizeof nm, "'%s'", b->name);
        switch (k % 4) {
        case 0:
            snprintf(b->dtype, sizeof b->dtype, "<i4");
            b->itemsize = 4;
            at += (size_t)snprintf(t + at, cap - at, "(%s, '<i4'), ", nm);
            break;
        case 1:
            snprintf(b->dtype, sizeof b->dtype, "<M8[%uus]", k % 997 + 2); /* [1us] is [us] */
            b->ndim = 2;
            b->dims[0] = k % 3 + 1;
            b->dims[1] = 2;
            b->itemsize = 8 * b->dims[0] * 2;
            at += (size_t)snprintf(t + at, cap - at, "(%s, '%s', (%llu, 2)), ", nm, b->dtype,
                                   (unsigned long long)b->dims[0]);
            break;
        case 2:
            snprintf(b->dtype, sizeof b->dtype, "|S%u", k % 50 + 2);
            b->itemsize = k % 50 + 2;
            at += (size_t)snprintf(t + at, cap - at, "(%s, '|S0', %u), ", nm, k % 50 + 2);
            break;
        default: {
            snprintf(b->dtype, sizeof b->dtype, "<u2");
            b->ndim = k % 6 + 1;
            b->itemsize = 2;
            at += (size_t)snprintf(t + at, cap - at, "(%s, ('<u2', (", nm);
            for (uint32_t d = 0; d < b->ndim; d++) {
                b->dims[d] = (k >> d) % 2 + 1;
                b->itemsize *= b->dims[d];
                at += (size_t)snprintf(t + at, cap - at, "%llu,%s", (unsigned long long)b->dims[d],
                                       d + 1 < b->ndim ? " " : "");
            }
            at += (size_t)snprintf(t + at, cap - at, "))), ");
        }
        }
        b->offset = off;
        off += b->itemsize;
    }
    snprintf(t + at, cap - at, "], 'fortran_order': False, 'shape': (0,), }");
    return t;
}

/* Field k of the tree is what big_descr says; NULL when it is. */
static const char *big_field_is(const npzs_array_info *a, uint32_t k, const big_field *b) {
    const npzs_dtnode *n = a->dt_nodes;
    if (k >= n[0].count) return "missing";
    const npzs_dtfield *f = &a->dt_fields[n[0].first + k];
    if (f->name_len != strlen(b->name) || memcmp(f->name, b->name, f->name_len)) return "name";
    if (b->title[0] ? !f->title || f->title_len != strlen(b->title) || memcmp(f->title, b->title, f->title_len)
                    : f->title != NULL)
        return "title";
    if (f->offset != b->offset) return "offset";
    const npzs_dtnode *t = &n[f->type];
    if (t->itemsize != b->itemsize) return "itemsize";
    if (b->ndim) {
        if (t->kind != NPZS_DT_SUBARRAY || t->ndim != b->ndim) return "subarray";
        for (uint32_t d = 0; d < b->ndim; d++)
            if (t->shape[d] != b->dims[d]) return "shape";
        t = &n[t->base];
    }
    if (t->kind != NPZS_DT_SCALAR || strcmp(t->dtype, b->dtype)) return "type string";
    return NULL;
}

/* Trees whose pools span many chunks and directory blocks (src/npy/npyhdr.c, "the pools"): 40000
 * fields, every one as NumPy makes it, on one parser between small headers (what it keeps is
 * reused, and published pointers stay good while the header is current). */
void test_big_tree(void) {
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_header_size = UINT64_C(1) << 30;
    lim.max_fields = 1000000;
    npzs_parser *p = npzs_new(&lim, NULL);
    static const uint32_t sizes[] = {3, 40000, 5, 40000, 1};
    for (size_t r = 0; r < sizeof sizes / sizeof sizes[0]; r++) {
        uint32_t n = sizes[r];
        big_field *fl = calloc(n, sizeof *fl);
        char *t = big_descr(n, fl);
        size_t len;
        uint8_t *f = npy2_of(t, &len);
        const npzs_array_info *a = header_of(p, f, len);
        CHECK(a != NULL, "big tree of %u fields: error %d rule %s", n, npzs_error(p),
              npzs_error_rule(p) ? npzs_error_rule(p) : "-");
        if (a) {
            uint64_t h = 0;
            const char *why = tree_check(a, &h);
            CHECK(!why, "big tree of %u fields: %s", n, why ? why : "");
            uint32_t bad = 0;
            const char *what = NULL;
            for (uint32_t k = 0; !why && k < n; k++) {
                const char *w = big_field_is(a, k, &fl[k]);
                if (w && !bad++) what = w;
            }
            CHECK(!why && bad == 0 && a->dt_nfields == n, "big tree of %u fields: %u differ (first: %s), %u listed", n,
                  bad, what ? what : "-", a->dt_nfields);
        }
        free(f);
        free(t);
        free(fl);
    }
    npzs_free(p);
}

/* The published tree's block, grown (src/npy/npyhdr.c, tree_room): the last header's tree is freed
 * before the larger one is made, so a parser holds one tree at a time.  A header of one field with
 * a long name, then a shorter one of 60 fields: the second grows the tree and nothing else that
 * the first sized (the scratch), and no block is live at any moment that is not live after it.
 * Each allocation of the second header failing is out of memory inside its text (the tree's at
 * its end), with a pool's rule, and leaks nothing; the parser, reset, then parses it. */
void test_tree_grows(void) {
    char ta[4200], tb[2000];
    int at = snprintf(ta, sizeof ta, "{'descr': [('");
    for (int k = 0; k < 3000; k++) ta[at++] = (char)('a' + k % 26);
    snprintf(ta + at, sizeof ta - (size_t)at, "', '<i4')], 'fortran_order': False, 'shape': (), }");
    at = snprintf(tb, sizeof tb, "{'descr': [");
    for (int k = 0; k < 60; k++)
        at += snprintf(tb + at, sizeof tb - (size_t)at, "('f%02d', '%s'), ", k, k % 2 ? "<i4" : "<f8");
    snprintf(tb + at, sizeof tb - (size_t)at, "], 'fortran_order': False, 'shape': (), }");
    size_t la, lb;
    uint8_t *fa = npy2_of(ta, &la), *fb = npy2_of(tb, &lb);
    check_alloc cnt = {0, -1, 0, 0};
    npzs_allocator al = {check_malloc, check_free, &cnt};
    npzs_parser *p = npzs_new(NULL, &al);
    const npzs_array_info *a = p ? header_of(p, fa, la) : NULL;
    CHECK(a && a->dt_nfields == 1, "tree grows: the first header refused (%d)", p ? npzs_error(p) : -1);
    long after_a = cnt.n;
    cnt.peak = cnt.live;
    a = p ? header_of(p, fb, lb) : NULL;
    CHECK(a && a->dt_nfields == 60 && cnt.n > after_a && cnt.peak == cnt.live,
          "tree grows: %u fields, %ld allocations, %ld blocks live at most and %ld after", a ? a->dt_nfields : 0,
          cnt.n - after_a, cnt.peak, cnt.live);
    npzs_free(p);
    CHECK(cnt.live == 0, "tree grows: %ld blocks leaked", cnt.live);
    long fails = 0, bad = 0;
    for (long i = after_a; i < cnt.n; i++) {
        check_alloc c = {0, i, 0, 0};
        al.opaque = &c;
        p = npzs_new(NULL, &al);
        if (!p || !header_of(p, fa, la)) {
            bad++;
            npzs_free(p);
            continue;
        }
        a = header_of(p, fb, lb);
        const char *rule = npzs_error_rule(p);
        uint64_t off = npzs_error_offset(p);
        if (a || npzs_error(p) != NPZS_E_NOMEM || !rule ||
            (strcmp(rule, "NOMEM.descr-stack") && strcmp(rule, "NOMEM.field-names")) || off < 12 || off > lb) {
            bad++;
            printf("  tree grows: allocation %ld failing gives %d %s at %llu\n", i, npzs_error(p), rule ? rule : "-",
                   (unsigned long long)off);
        }
        c.fail_at = -1;
        a = header_of(p, fb, lb);
        if (!a || a->dt_nfields != 60) bad++;
        npzs_free(p);
        if (c.live != 0) bad++;
        fails++;
    }
    CHECK(fails == cnt.n - after_a && fails > 0 && bad == 0, "tree grows: %ld of %ld failing allocations wrong", bad,
          fails);
    free(fa);
    free(fb);
}

/* The pools' first chunks (src/npy/npyhdr.c, npzs__header_pools) are made before the first header,
 * plain or structured, and only then: a top block, a directory and a chunk for each of the six
 * pools.  Each of those allocations failing is out of memory at the header text's first byte
 * (10 in a version 1.0 file, 12 in 2.0), with the pool's rule, and leaks nothing. */
void test_pools_first(void) {
    const char *t = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    for (int v = 1; v <= 2; v++) {
        size_t len;
        uint8_t *f = v == 1 ? npy_of(t, 8, &len) : npy2_of(t, &len);
        const uint64_t text_at = v == 1 ? 10 : 12;
        check_alloc probe = {0, -1, 0, 0};
        npzs_allocator al = {check_malloc, check_free, &probe};
        npzs_parser *p = npzs_new(NULL, &al);
        long before = probe.n;
        CHECK(p && header_of(p, f, len) != NULL, "pools: v%d header refused", v);
        long first = probe.n;
        CHECK(p && header_of(p, f, len) != NULL && probe.n == first, "pools: v%d second header allocates %ld", v,
              probe.n - first);
        npzs_free(p);
        CHECK(probe.live == 0 && first - before >= 18, "pools: v%d %ld live, %ld allocations in the first header", v,
              probe.live, first - before);
        int pools = 0, names = 0, ok = 1;
        for (long i = before; i < first; i++) {
            check_alloc c = {0, i, 0, 0};
            al.opaque = &c;
            p = npzs_new(NULL, &al);
            if (!p) {
                ok = 0;
                continue;
            }
            const npzs_array_info *a = header_of(p, f, len);
            const char *rule = npzs_error_rule(p);
            if (a || npzs_error(p) != NPZS_E_NOMEM || !rule) {
                ok = 0;
                printf("  pools v%d: allocation %ld failing gives %d\n", v, i, npzs_error(p));
            } else if (!strcmp(rule, "NOMEM.descr-stack") || !strcmp(rule, "NOMEM.field-names")) {
                pools++;
                names += !strcmp(rule, "NOMEM.field-names");
                if (npzs_error_offset(p) != text_at) {
                    ok = 0;
                    printf("  pools v%d: allocation %ld failing: %s at %llu\n", v, i, rule,
                           (unsigned long long)npzs_error_offset(p));
                }
            }
            npzs_free(p);
            if (c.live != 0) ok = 0;
        }
        CHECK(ok && pools == 18 && names == 3,
              "pools: v%d first header's allocations failing: %d pool blocks (%d of names)", v, pools, names);
        free(f);
    }
}

/* A pool holds at most 128 MiB (NPZS_POOL_*): a tree that needs more is out of memory, with the
 * descr's rule, at the end of the type string of the field whose node did not fit, when no other
 * limit stops it first. */
void test_pool_full(void) {
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_header_size = UINT64_C(1) << 30;
    lim.max_fields = UINT32_MAX;
    lim.max_memory = 0;
    /* a node record takes at most 57 bytes of a chunk (36 of 56 bytes in 2048): 2.8 M fields
     * of one node each need more than 128 MiB of nodes */
    const size_t nf = (size_t)128 * 1024 * 1024 / 48;
    const char unit[] = "('a', '|i1'), ";
    size_t cap = nf * (sizeof unit - 1) + 128, at = 0;
    char *t = malloc(cap);
    at += (size_t)snprintf(t, cap, "{'descr': [");
    for (size_t k = 0; k < nf; k++) {
        memcpy(t + at, unit, sizeof unit - 1);
        at += sizeof unit - 1;
    }
    snprintf(t + at, cap - at, "], 'fortran_order': False, 'shape': (0,), }");
    size_t len;
    uint8_t *f = npy2_of(t, &len);
    npzs_parser *p = npzs_new(&lim, NULL);
    const npzs_array_info *a = header_of(p, f, len);
    const char *rule = npzs_error_rule(p);
    /* the text starts at 12; field k's type string ends at 12 + 11 + 14 k + 11 */
    uint64_t off = npzs_error_offset(p), k = (off - 34) / (sizeof unit - 1);
    CHECK(!a && npzs_error(p) == NPZS_E_NOMEM && rule && !strcmp(rule, "NOMEM.descr-stack") && off >= 34 && off < len &&
              (off - 34) % (sizeof unit - 1) == 0 && k > nf / 2,
          "a tree past a pool's 128 MiB: error %d rule %s at %llu (field %llu of %zu)", npzs_error(p),
          rule ? rule : "-", (unsigned long long)off, (unsigned long long)k, nf);
    npzs_free(p);
    free(f);
    free(t);
}
