/* tests/api/dtype.c -- what a header says: a descr nested 1000 deep on a small stack, the
 * array-size rule at its boundary, one structured dtype's tree against NumPy's, and the memo of
 * the last header against a parser without it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

/* The descr parser keeps its nesting off the C stack: a descr nested max_depth = 1000 deep (the
 * largest the API accepts) parses on a thread with a 64 KiB stack, in lists and in subarrays. */
typedef struct deep_job {
    int subarrays;
    int ok;
} deep_job;

static void *deep_thread(void *arg) {
    deep_job *j = arg;
    enum { D = 1000 };
    size_t cap = 64 * D + 256, n = 0;
    char *t = malloc(cap);
    n += (size_t)sprintf(t + n, "{'descr': [");
    if (j->subarrays) {
        n += (size_t)sprintf(t + n, "('a', ");
        for (int i = 1; i < D; i++) t[n++] = '(';
        n += (size_t)sprintf(t + n, "'<i4'");
        for (int i = 1; i < D; i++) n += (size_t)sprintf(t + n, ", ())");
        n += (size_t)sprintf(t + n, ")");
    } else {
        for (int i = 1; i < D; i++) n += (size_t)sprintf(t + n, "('a', [");
        n += (size_t)sprintf(t + n, "('a', '<i4')");
        for (int i = 1; i < D; i++) n += (size_t)sprintf(t + n, "])");
    }
    n += (size_t)sprintf(t + n, "], 'fortran_order': False, 'shape': (1,), }\n");
    size_t len = 10 + n + 4;
    uint8_t *f = malloc(len);
    memcpy(f, "\x93NUMPY\x01\x00", 8);
    f[8] = (uint8_t)n;
    f[9] = (uint8_t)(n >> 8);
    memcpy(f + 10, t, n);
    memset(f + 10 + n, 7, 4);
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_depth = D;
    lim.max_header_size = 1u << 20;
    run r = parse(f, len, NULL, 0, &lim, NULL);
    lim.max_depth = D - 1; /* one level too deep: refused, not a crash either */
    run r2 = parse(f, len, NULL, 0, &lim, NULL);
    j->ok = r.verdict == 1 && r2.verdict == NPZS_E_LIMIT;
    if (!j->ok)
        printf("  deep descr (%s): verdicts %d, %d\n", j->subarrays ? "subarrays" : "lists", r.verdict, r2.verdict);
    free(f);
    free(t);
    return NULL;
}

void test_deep_descr(void) {
    for (int sub = 0; sub < 2; sub++) {
        pthread_attr_t at;
        pthread_t th;
        deep_job j = {sub, 0};
        pthread_attr_init(&at);
        pthread_attr_setstacksize(&at, 64 * 1024);
        int rc = pthread_create(&th, &at, deep_thread, &j);
        CHECK(rc == 0, "pthread_create");
        if (rc == 0) pthread_join(th, NULL);
        pthread_attr_destroy(&at);
        CHECK(j.ok, "a descr nested 1000 deep (%s) on a 64 KiB stack", sub ? "subarrays" : "lists");
    }
}

/* The array-size rule (itemsize times the non-zero dims must fit in 2**63 - 1: NumPy's intp) at
 * its boundary: shapes whose product is just below, at and above it, with dims on either side of
 * 2**32 (the check multiplies two numbers below 2**32 directly and divides otherwise), against the
 * product computed in 128 bits.  The limit on total bytes is lifted so that only the rule decides. */
__extension__ typedef unsigned __int128 u128; /* GCC and Clang */

void test_array_size_rule(void) {
    static const uint64_t dims[][3] = {{4294967295u, 4294967295u, 1},
                                       {4294967295u, 2147483648u, 1},
                                       {4294967295u, 2147483647u, 1},
                                       {3037000500u, 3037000500u, 1},
                                       {3037000499u, 3037000499u, 1},
                                       {65536, 65536, 2147483648u},
                                       {65536, 65536, 2147483647u},
                                       {UINT64_C(4294967296), UINT64_C(2147483648), 1},
                                       {UINT64_C(4294967296), UINT64_C(2147483647), 1},
                                       {UINT64_C(9223372036854775807), 1, 1},
                                       {UINT64_C(4611686018427387904), 2, 1},
                                       {UINT64_C(4611686018427387903), 2, 1},
                                       {0, UINT64_C(9223372036854775807), 3},
                                       {3, UINT64_C(3074457345618258602), 1},
                                       {3, UINT64_C(3074457345618258603), 1},
                                       /* the overflow at the last dim, both factors below 2**32 */
                                       {1, 4294967295u, 4294967295u},
                                       {1, 3037000500u, 3037000500u},
                                       {1, 3037000499u, 3037000499u},
                                       {1, 4294967295u, 2147483648u},
                                       {1, 4294967295u, 2147483647u}};
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_total_bytes = UINT64_MAX;
    int bad = 0;
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        for (unsigned isz = 1; isz <= 2; isz++) {
            char t[256];
            snprintf(t, sizeof t, "{'descr': '<u%u', 'fortran_order': False, 'shape': (%llu, %llu, %llu), }", isz,
                     (unsigned long long)dims[i][0], (unsigned long long)dims[i][1], (unsigned long long)dims[i][2]);
            u128 prod = isz; /* of the non-zero dims: NumPy's rule ignores the zeros */
            for (int k = 0; k < 3; k++)
                if (dims[i][k] && prod <= ((u128)1 << 64)) prod *= dims[i][k];
            int over = prod > (u128)UINT64_C(0x7FFFFFFFFFFFFFFF);
            size_t n;
            uint8_t *f = npy_of(t, 0, &n);
            npzs_parser *p = npzs_new(&lim, NULL);
            npzs_in in = {f, n, 0};
            npzs_event ev;
            int rc, saw_header = 0;
            while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) saw_header |= ev.type == NPZS_EV_HEADER;
            int err = npzs_error(p);
            if (over ? (err != NPZS_E_SIZE_OVERFLOW || !npzs_error_rule(p) ||
                        strcmp(npzs_error_rule(p), "HDR-SHAPE.size-overflow"))
                     : !saw_header) {
                bad++;
                printf("  shape %s: error %d rule %s, expected %s\n", t, err,
                       npzs_error_rule(p) ? npzs_error_rule(p) : "-",
                       over ? "HDR-SHAPE.size-overflow" : "a HEADER event");
            }
            npzs_free(p);
            free(f);
        }
    CHECK(bad == 0, "the array-size rule at its boundary: %d shapes decided otherwise", bad);
}

static int field_is(const npzs_array_info *a, uint32_t f, const char *name, const char *title, uint64_t off) {
    const npzs_dtfield *d = &a->dt_fields[f];
    if (d->name_len != strlen(name) || memcmp(d->name, name, d->name_len)) return 0;
    if (title ? !d->title || d->title_len != strlen(title) || memcmp(d->title, title, d->title_len) : d->title != NULL)
        return 0;
    return d->offset == off;
}

/* The tree of one structured descr, against what NumPy 1.24 and 2.x make of it
 * (np.load(...).dtype.fields): the padding field ('', '|V4') is dropped, the titled field keeps
 * its title, ('|S0', 3) is S3, and a subarray of a subarray stays two nodes. */
void test_dtype_tree(void) {
    size_t len;
    uint8_t *f = npy_of(
        "{'descr': [('a', '<i4'), ('', '|V4'), (('t', 'b'), [('c', '<f8', (2,)), ('d', ('|S0', 3))]), "
        "('e', ('<u2', (2, 3)), (4,))], 'fortran_order': False, 'shape': (2,), }",
        150, &len);
    npzs_parser *p = npzs_new(NULL, NULL);
    npzs_in in = {f, len, 0};
    npzs_finish(p);
    npzs_event ev;
    int rc;
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT && ev.type != NPZS_EV_HEADER) {}
    CHECK(rc == NPZS_EVENT, "no header event: %d", rc);
    if (rc == NPZS_EVENT) {
        const npzs_array_info *a = ev.array;
        uint64_t h = 0;
        const char *why = tree_check(a, &h);
        CHECK(!why, "tree: %s", why ? why : "");
        const npzs_dtnode *n = a->dt_nodes;
        CHECK(a->structured && a->itemsize == 75 && n[0].count == 3 && a->dt_nfields == 5, "top level: %d %llu %u %u",
              a->structured, (unsigned long long)a->itemsize, n[0].count, a->dt_nfields);
        if (!why && n[0].count == 3) {
            uint32_t f0 = n[0].first;
            CHECK(field_is(a, f0, "a", NULL, 0) && field_is(a, f0 + 1, "b", "t", 8) &&
                      field_is(a, f0 + 2, "e", NULL, 27),
                  "top-level fields");
            const npzs_dtnode *ta = &n[a->dt_fields[f0].type], *tb = &n[a->dt_fields[f0 + 1].type],
                              *te = &n[a->dt_fields[f0 + 2].type];
            CHECK(ta->kind == NPZS_DT_SCALAR && !strcmp(ta->dtype, "<i4") && ta->itemsize == 4, "a: <i4");
            CHECK(tb->kind == NPZS_DT_STRUCT && tb->itemsize == 19 && tb->count == 2, "b: a struct of 19 bytes");
            if (tb->kind == NPZS_DT_STRUCT && tb->count == 2) {
                CHECK(field_is(a, tb->first, "c", NULL, 0) && field_is(a, tb->first + 1, "d", NULL, 16), "b's fields");
                const npzs_dtnode *tc = &n[a->dt_fields[tb->first].type], *td = &n[a->dt_fields[tb->first + 1].type];
                CHECK(tc->kind == NPZS_DT_SUBARRAY && tc->ndim == 1 && tc->shape[0] == 2 && tc->itemsize == 16 &&
                          !strcmp(n[tc->base].dtype ? n[tc->base].dtype : "", "<f8"),
                      "c: <f8 (2,)");
                CHECK(td->kind == NPZS_DT_SCALAR && !strcmp(td->dtype, "|S3") && td->itemsize == 3, "d: |S3");
            }
            CHECK(te->kind == NPZS_DT_SUBARRAY && te->ndim == 1 && te->shape[0] == 4 && te->itemsize == 48,
                  "e: (4,) of");
            if (te->kind == NPZS_DT_SUBARRAY) {
                const npzs_dtnode *tb2 = &n[te->base];
                CHECK(tb2->kind == NPZS_DT_SUBARRAY && tb2->ndim == 2 && tb2->shape[0] == 2 && tb2->shape[1] == 3 &&
                          tb2->itemsize == 12 && !strcmp(n[tb2->base].dtype ? n[tb2->base].dtype : "", "<u2"),
                      "e: (<u2, (2, 3))");
            }
        }
    }
    npzs_free(p);
    free(f);
    /* a plain dtype has no tree */
    f = npy_of("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4, &len);
    p = npzs_new(NULL, NULL);
    in = (npzs_in){f, len, 0};
    npzs_finish(p);
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT && ev.type != NPZS_EV_HEADER) {}
    CHECK(rc == NPZS_EVENT && !ev.array->structured && !ev.array->dt_nodes && !ev.array->dt_nnodes, "plain dtype tree");
    npzs_free(p);
    free(f);
}

/* The memo of the last header: a member whose preamble and header text repeat the last header
 * parsed takes its results and CRC.  An archive that repeats, changes and comes back to one
 * header, with a v2.0 preamble around the same text, a structured header and one only the
 * general parser takes (both overwrite the shape, dtype and scratch the memo points into), a
 * blob, and a header that fails after one that was kept: the events and errors are those of a
 * parser without the memo, at every push size, and the memo was used where marked. */
static void npy_v2(fz_buf *b, const char *dict, const uint8_t *data, size_t dn) {
    fz_buf t = {0};
    fz_npy(&t, dict, data, dn); /* v1.0: 10-byte preamble; v2.0 has 12 and the same text */
    size_t hl = (size_t)t.p[8] | ((size_t)t.p[9] << 8);
    fz_put(b, "\x93NUMPY\x02\x00", 8);
    fz_put32(b, (uint32_t)hl);
    fz_put(b, t.p + 10, t.n - 10);
    fz_free_buf(&t);
}

void test_header_memo(void) {
    static const uint8_t d[64] = {1, 2, 3, 4, 5, 6, 7, 8};
    const char *A = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    const char *B = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
    const char *C = "{'descr': '<u2', 'fortran_order': True, 'shape': (2, 2), }";
    const char *S = "{'descr': [('a', '<i4'), ('b', '|u1', (4,))], 'fortran_order': False, 'shape': (1,), }";
    const char *G = "{'shape': (2,), 'fortran_order': False, 'descr': '>f4', }"; /* keys unsorted: general */
    const char *X = "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }";
    fz_buf c[16];
    memset(c, 0, sizeof c);
    int k = 0;
    fz_npy(&c[k++], A, d, 8);
    fz_npy(&c[k++], A, d + 1, 8); /* hit */
    fz_npy(&c[k++], B, d, 12);
    fz_npy(&c[k++], A, d, 8);
    npy_v2(&c[k++], A, d, 8);     /* the same text, another preamble */
    npy_v2(&c[k++], A, d, 8);     /* hit */
    fz_npy(&c[k++], S, d, 8);     /* structured: not kept, and the memo forgotten */
    npy_v2(&c[k++], A, d, 8);     /* not a hit: the memo went with the structured parse */
    fz_npy(&c[k++], G, d, 8);     /* the general parser's result is kept too */
    fz_npy(&c[k++], G, d + 3, 8); /* hit */
    fz_npy(&c[k++], A, d, 8);
    fz_put(&c[k++], "not an array", 12);
    fz_npy(&c[k++], A, d + 2, 8); /* hit: a blob parses nothing */
    fz_npy(&c[k++], C, d, 8);
    fz_npy(&c[k++], C, d, 8); /* hit */
    int nk = k;
    for (int bad = 0; bad < 2; bad++) {
        fz_buf z = {0};
        fz_member m[16];
        char names[16][24];
        int n = bad ? 3 : nk;
        fz_buf xb = {0};
        fz_npy(&xb, X, d, 8);
        for (int i = 0; i < n; i++) {
            snprintf(names[i], sizeof names[i], "a%d.npy", i);
            const fz_buf *src = bad && i == 2 ? &xb : &c[i];
            fz_member t = {names[i], src->p, src->n, i % 3 == 2 ? 8 : 0, 0, 0, 0, 0};
            m[i] = t;
            fz_zip_member(&z, &m[i]);
        }
        size_t cd = z.n;
        for (int i = 0; i < n; i++) fz_zip_cdh(&z, &m[i]);
        fz_zip_eocd(&z, (unsigned)n, (uint32_t)(z.n - cd), (uint32_t)cd);
        static const uint8_t pushes[][1] = {{0}, {1}, {7}, {0xE4}};
        for (size_t s = 0; s < sizeof pushes / sizeof pushes[0]; s++) {
            fz_opts fo;
            fz_opts_init(&fo);
            if (s) {
                fo.sched = pushes[s];
                fo.sched_n = 1;
            }
            fz_result on, off;
            fz_run(z.p, z.n, &fo, &on);
            fo.no_memo = 1;
            fz_run(z.p, z.n, &fo, &off);
            CHECK(fz_same(&on, &off) && on.accepted == !bad && (!bad || on.err == NPZS_E_SIZE_OVERFLOW),
                  "header memo, archive %d, pushes %zu: with and without the memo differ (accepted %d/%d, err %d/%d)",
                  bad, s, on.accepted, off.accepted, on.err, off.err);
        }
        /* the memo was taken where the text repeats the last fast-path header */
        npzs_parser *p = npzs_new(NULL, NULL);
        npzs_in in = {z.p, z.n, 0};
        npzs_event ev;
        while (npzs_next(p, &in, &ev) == NPZS_EVENT) {}
        uint64_t want = bad ? 1 : 5; /* the members marked "hit" above */
        CHECK(npzs__header_memo_hits(p) == want, "header memo, archive %d: %llu hits, expected %llu", bad,
              (unsigned long long)npzs__header_memo_hits(p), (unsigned long long)want);
        npzs_free(p);
        fz_free_buf(&z);
        fz_free_buf(&xb);
    }
    for (int i = 0; i < nk; i++) fz_free_buf(&c[i]);
}
