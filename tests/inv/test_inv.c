/*
 * tests/inv/test_inv.c -- the inventory walker (src/inv/inv.c, npzstream_inv.h), on archives built
 * here byte by byte (fuzz/common.c's builders):
 *   rules      every INV.* rule: its code, rule id and offset, on a member or on the listing;
 *   pushes     every archive's listing the same at every push size (1 .. its length, and whole);
 *   checked    a member past check_after: its content checked (kind, sniff, dtype, shape), and
 *              the strict parser's own verdict unchanged when the walker runs beside it;
 *   alloc      every allocation failing in turn (check_alloc): the walk ends with NOMEM, listing
 *              what it had, and nothing is leaked;
 *   api        the calls' edges: not a ZIP, an empty archive, reset, invalid limits.
 * Run plain and under ASan+UBSan (make check; tests/run_all.py "inv-c", "inv-c-asan").
 */
#define NPZS_CHECK_MAIN
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../c/check.h"
#include "common.h"
#include "npzstream_inv.h"

/* ---- the archives ---- */

static const char ARR_DICT[] = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
static const char OBJ_DICT[] = "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }";
static const uint8_t ARR_DATA[8] = {1, 0, 0, 0, 2, 0, 0, 0};
static const uint8_t PICKLE[] = {0x80, 4, 0x95, 5, 0, 0, 0, 0, 0, 0, 0, 'K', 1, '.'};

static fz_buf npy_of(const char *dict) {
    fz_buf b = {0};
    fz_npy(&b, dict, ARR_DATA, sizeof ARR_DATA);
    return b;
}

/* The members, their central directory and end record. */
static fz_buf archive(fz_member *ms, size_t k) {
    fz_buf b = {0};
    for (size_t i = 0; i < k; i++) fz_zip_member(&b, &ms[i]);
    uint64_t cd = b.n;
    for (size_t i = 0; i < k; i++) fz_zip_cdh(&b, &ms[i]);
    fz_zip_eocd(&b, (unsigned)k, (uint32_t)(b.n - cd), (uint32_t)cd);
    return b;
}

/* The three-member archive of the issue: an object array, a pickle, an array (method 0 or 8). */
static fz_buf multi(int method, fz_member ms[3]) {
    static fz_buf obj, arr;
    fz_free_buf(&obj);
    fz_free_buf(&arr);
    obj = npy_of(OBJ_DICT);
    arr = npy_of(ARR_DICT);
    ms[0] = (fz_member){"meta.npy", obj.p, obj.n, method, 0, 0, 0, 0};
    ms[1] = (fz_member){"opt.pkl", PICKLE, sizeof PICKLE, method, 0, 0, 0, 0};
    ms[2] = (fz_member){"w.npy", arr.p, arr.n, method, 0, 0, 0, 0};
    return archive(ms, 3);
}

/* ---- the walk ---- */

/* Walk n bytes pushed step at a time (0: whole), members after check_after checked. */
static npzs_inv *walk_with(const uint8_t *d, size_t n, size_t step, uint64_t check_after, const npzs_limits *lim,
                           const npzs_allocator *al, int *push_rc) {
    npzs_inv *v = npzs_inv_new(lim, al);
    if (!v) return NULL;
    npzs_inv_check_after(v, check_after);
    *push_rc = 0;
    for (size_t i = 0; i < n;) {
        size_t k = step && n - i > step ? step : n - i;
        int rc = npzs_inv_push(v, d + i, k);
        if (rc) *push_rc = rc;
        i += k;
    }
    npzs_inv_finish(v);
    return v;
}

static npzs_inv *walk(const uint8_t *d, size_t n, size_t step, uint64_t check_after) {
    int rc;
    npzs_inv *v = walk_with(d, n, step, check_after, NULL, NULL, &rc);
    CHECK(v && rc == 0, "the walk failed (rc %d)", rc);
    return v;
}

static const npzs_inv_member *member(const npzs_inv *v, size_t i) {
    const npzs_inv_member *m = v ? npzs_inv_get(v, i) : NULL;
    CHECK(m != NULL, "no member %zu (%zu listed)", i, v ? npzs_inv_count(v) : 0);
    return m;
}

static int named(const npzs_inv_member *m, const char *name) {
    return m && m->name_len == strlen(name) && !memcmp(m->name, name, m->name_len);
}

/* A member's error is exactly (code, rule, offset). */
static void member_error(const npzs_inv_member *m, int code, const char *rule, uint64_t off, const char *what) {
    if (!m) return;
    CHECK(m->error == code, "%s: error %s, want %s", what, npzs_error_name(m->error), npzs_error_name(code));
    CHECK(m->rule && !strcmp(m->rule, rule), "%s: rule %s, want %s", what, m->rule ? m->rule : "(none)", rule);
    CHECK(m->error_offset == off, "%s: offset %llu, want %llu", what, (unsigned long long)m->error_offset,
          (unsigned long long)off);
    CHECK(m->message && m->message[0], "%s: no message", what);
}

/* The listing's own error is exactly (code, rule, offset). */
static void listing_error(const npzs_inv *v, int code, const char *rule, uint64_t off, const char *what) {
    const char *r = NULL;
    uint64_t o = 0;
    int e = npzs_inv_error(v, &r, &o);
    CHECK(e == code, "%s: listing error %s, want %s", what, npzs_error_name(e), npzs_error_name(code));
    CHECK(r && !strcmp(r, rule), "%s: listing rule %s, want %s", what, r ? r : "(none)", rule);
    CHECK(o == off, "%s: listing offset %llu, want %llu", what, (unsigned long long)o, (unsigned long long)off);
}

/* A limit's numbers: the listing's (m NULL) or member m's are exactly (name, value, needed). */
static void limit_numbers(const npzs_inv *v, const npzs_inv_member *m, const char *name, uint64_t value,
                          uint64_t needed, const char *what) {
    const char *n = NULL;
    uint64_t val = 0, need = 0;
    int have = 0;
    if (m) {
        have = m->limit != NULL;
        n = m->limit;
        val = m->limit_value;
        need = m->limit_needed;
    } else {
        have = npzs_inv_error_limit(v, &n, &val, &need);
    }
    CHECK(have && n && !strcmp(n, name) && val == value && need == needed,
          "%s: the limit's numbers (%s, %llu, %llu), want (%s, %llu, %llu)", what, n ? n : "(none)",
          (unsigned long long)val, (unsigned long long)need, name, (unsigned long long)value,
          (unsigned long long)needed);
}

/* Two listings are the same (every field a caller reads). */
static int same(const npzs_inv *a, const npzs_inv *b) {
    if (npzs_inv_count(a) != npzs_inv_count(b) || npzs_inv_complete(a) != npzs_inv_complete(b) ||
        npzs_inv_is_zip(a) != npzs_inv_is_zip(b))
        return 0;
    for (size_t i = 0; i < npzs_inv_count(a); i++) {
        const npzs_inv_member *x = npzs_inv_get(a, i), *y = npzs_inv_get(b, i);
        if (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) || x->source != y->source ||
            x->flags != y->flags || x->method != y->method || x->offset != y->offset || x->csize != y->csize ||
            x->size != y->size || x->crc32 != y->crc32 || x->checked != y->checked || x->kind != y->kind ||
            x->sniff != y->sniff || strcmp(x->dtype, y->dtype) || x->ndim != y->ndim || x->nbytes != y->nbytes ||
            x->error != y->error || x->rule != y->rule || x->error_offset != y->error_offset ||
            x->content_offset != y->content_offset || x->limit != y->limit || x->limit_value != y->limit_value ||
            x->limit_needed != y->limit_needed)
            return 0;
    }
    const char *ra, *rb, *la, *lb;
    uint64_t oa, ob, va, vb, na, nb;
    return npzs_inv_error(a, &ra, &oa) == npzs_inv_error(b, &rb, &ob) && ra == rb && oa == ob &&
           npzs_inv_error_limit(a, &la, &va, &na) == npzs_inv_error_limit(b, &lb, &vb, &nb) && la == lb && va == vb &&
           na == nb;
}

/* ---- rules ---- */

static void test_framing(void) {
    fz_member ms[3];
    fz_buf z = multi(0, ms);
    /* junk where the third member's local header must start */
    memcpy(z.p + ms[2].lfh_off, "JUNK", 4);
    npzs_inv *v = walk(z.p, z.n, 0, 0);
    CHECK(npzs_inv_count(v) == 2, "INV.framing: %zu members listed, want 2", npzs_inv_count(v));
    listing_error(v, NPZS_E_ZIP_BAD_HEADER, "INV.framing", ms[2].lfh_off, "INV.framing");
    CHECK(!npzs_inv_complete(v), "INV.framing: complete");
    npzs_inv_free(v);
    fz_free_buf(&z);
}

static void test_central_only(void) {
    fz_member ms[3];
    fz_buf z = multi(0, ms);
    /* the third central entry's local header offset points nowhere */
    uint64_t cd = ms[2].lfh_off + 30 + strlen("w.npy") + ms[2].csize;
    uint64_t third = cd + 2 * 46 + strlen("meta.npy") + strlen("opt.pkl");
    CHECK(z.p[third] == 'P' && z.p[third + 1] == 'K' && z.p[third + 2] == 1,
          "the third central entry is not where computed");
    z.p[third + 42] = 7;
    z.p[third + 43] = z.p[third + 44] = z.p[third + 45] = 0;
    npzs_inv *v = walk(z.p, z.n, 0, 0);
    CHECK(npzs_inv_count(v) == 4, "INV.central-only: %zu members, want 4", npzs_inv_count(v));
    const npzs_inv_member *w = member(v, 2), *c = member(v, 3);
    CHECK(w && w->source == NPZS_INV_LOCAL && !w->error, "INV.central-only: w.npy's local header unmatched, no error");
    CHECK(named(c, "w.npy") && c->source == NPZS_INV_CENTRAL && c->offset == 7, "INV.central-only: the entry listed");
    member_error(c, NPZS_E_CD_MISMATCH, "INV.central-only", third, "INV.central-only");
    CHECK(npzs_inv_complete(v) && !npzs_inv_error(v, NULL, NULL), "INV.central-only: the listing reached its end");
    npzs_inv_free(v);
    fz_free_buf(&z);
}

static void test_method(void) {
    /* a second member compressed with bzip2 (12), then one encrypted (flag bit 0) */
    fz_buf arr = npy_of(ARR_DICT), z = {0};
    fz_member a = {"a.npy", arr.p, arr.n, 0, 0, 0, 0, 0};
    fz_zip_member(&z, &a);
    uint64_t at12 = z.n;
    fz_zip_lfh(&z, "b.bz2", 5, 20, 0, 12, 0, 3, 3, NULL, 0);
    fz_put(&z, "xyz", 3);
    uint64_t enc = z.n;
    fz_zip_lfh(&z, "c.npy", 5, 20, 1, 0, 0, 3, 3, NULL, 0);
    fz_put(&z, "abc", 3);
    uint64_t end = z.n;
    fz_zip_eocd(&z, 0, 0, (uint32_t)end);
    npzs_inv *v = walk(z.p, z.n, 0, 0);
    CHECK(npzs_inv_count(v) == 3, "INV.method: %zu members", npzs_inv_count(v));
    member_error(member(v, 1), NPZS_E_ZIP_UNSUPPORTED, "INV.method", at12, "INV.method (bzip2)");
    member_error(member(v, 2), NPZS_E_ZIP_UNSUPPORTED, "INV.method", enc, "INV.method (encrypted)");
    CHECK(member(v, 1) && !member(v, 1)->checked, "INV.method: an unsupported member is not checked");
    CHECK(npzs_inv_complete(v), "INV.method: the sizes still frame the members");
    npzs_inv_free(v);
    /* the same method with its sizes after the data: nothing delimits it, the listing stops */
    fz_free_buf(&z);
    fz_zip_member(&z, &a);
    uint64_t dd = z.n;
    fz_zip_lfh(&z, "b.bz2", 5, 20, 8, 12, 0, 0, 0, NULL, 0);
    uint64_t data = z.n;
    fz_put(&z, "xyz", 3);
    v = walk(z.p, z.n, 0, 0);
    member_error(member(v, 1), NPZS_E_ZIP_UNSUPPORTED, "INV.method", dd, "INV.method (descriptor)");
    listing_error(v, NPZS_E_ZIP_UNSUPPORTED, "INV.framing", data, "INV.method (descriptor)");
    npzs_inv_free(v);
    fz_free_buf(&z);
    fz_free_buf(&arr);
}

/* A second member whose local header is patched by fix (its data starts at *data). */
static fz_buf second_patched(int method, void (*fix)(uint8_t *lfh, fz_member *m), uint64_t *data, fz_member ms[2]) {
    static fz_buf arr;
    fz_free_buf(&arr);
    arr = npy_of(ARR_DICT);
    ms[0] = (fz_member){"a.npy", arr.p, arr.n, 0, 0, 0, 0, 0};
    ms[1] = (fz_member){"b.npy", arr.p, arr.n, method, 0, 0, 0, 0};
    fz_buf z = {0};
    fz_zip_member(&z, &ms[0]);
    fz_zip_member(&z, &ms[1]);
    fix(z.p + ms[1].lfh_off, &ms[1]);
    *data = ms[1].lfh_off + 30 + 5;
    uint64_t cd = z.n;
    for (int i = 0; i < 2; i++) fz_zip_cdh(&z, &ms[i]);
    fz_zip_eocd(&z, 2, (uint32_t)(z.n - cd), (uint32_t)cd);
    return z;
}

static void bad_crc(uint8_t *h, fz_member *m) {
    (void)m;
    h[14] ^= 0xFF;
}
static void bigger_size(uint8_t *h, fz_member *m) {
    (void)m;
    h[22]++;
} /* the uncompressed size + 1 */
static void bad_deflate(uint8_t *h, fz_member *m) {
    (void)m;
    memset(h + 30 + 5, 0xFF, 4);
} /* a reserved block type */
static void nothing(uint8_t *h, fz_member *m) {
    (void)h;
    (void)m;
}

static void test_member_content(void) {
    static const struct {
        const char *what;
        int method;
        void (*fix)(uint8_t *, fz_member *);
        int code;
        const char *rule;
    } cases[] = {
        {"INV.crc (stored)", 0, bad_crc, NPZS_E_CRC_MISMATCH, "INV.crc"},
        {"INV.crc (deflated)", 8, bad_crc, NPZS_E_CRC_MISMATCH, "INV.crc"},
        {"INV.size (stored)", 0, bigger_size, NPZS_E_SIZE_MISMATCH, "INV.size"},
        {"INV.size (deflated)", 8, bigger_size, NPZS_E_SIZE_MISMATCH, "INV.size"},
        {"INV.inflate", 8, bad_deflate, NPZS_E_INFLATE, "INV.inflate"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        fz_member ms[2];
        uint64_t data;
        fz_buf z = second_patched(cases[k].method, cases[k].fix, &data, ms);
        npzs_inv *v = walk(z.p, z.n, 0, 0);
        const npzs_inv_member *b = member(v, 1);
        CHECK(b && b->checked, "%s: not checked", cases[k].what);
        member_error(b, cases[k].code, cases[k].rule, data, cases[k].what);
        CHECK(npzs_inv_complete(v) && !npzs_inv_error(v, NULL, NULL), "%s: the listing did not reach its end",
              cases[k].what);
        /* before check_after: framed only, no error of its own */
        npzs_inv *u = walk(z.p, z.n, 0, ms[1].lfh_off);
        CHECK(member(u, 1) && !member(u, 1)->checked && !member(u, 1)->error, "%s: checked before check_after",
              cases[k].what);
        npzs_inv_free(u);
        npzs_inv_free(v);
        fz_free_buf(&z);
    }
    /* a clean one: no error, its content known */
    fz_member ms[2];
    uint64_t data;
    fz_buf z = second_patched(8, nothing, &data, ms);
    npzs_inv *v = walk(z.p, z.n, 0, 0);
    const npzs_inv_member *b = member(v, 1);
    CHECK(b && b->checked && !b->error && b->kind == NPZS_KIND_ARRAY && b->sniff == NPZS_SNIFF_NPY &&
              !strcmp(b->dtype, "<i4") && b->ndim == 1 && b->shape[0] == 2 && b->nbytes == 8,
          "a clean deflated array: its content");
    npzs_inv_free(v);
    fz_free_buf(&z);
}

static void test_pickle_member(void) {
    fz_member ms[3];
    fz_buf z = multi(8, ms);
    npzs_inv *v = walk(z.p, z.n, 0, 0);
    CHECK(npzs_inv_count(v) == 3 && npzs_inv_complete(v), "multi: %zu members", npzs_inv_count(v));
    const npzs_inv_member *o = member(v, 1), *w = member(v, 2);
    CHECK(named(o, "opt.pkl") && o->kind == NPZS_KIND_BLOB && o->sniff == NPZS_SNIFF_PICKLE && !o->error,
          "multi: opt.pkl a pickle blob");
    CHECK(named(w, "w.npy") && w->kind == NPZS_KIND_ARRAY && !w->error, "multi: w.npy an array");
    npzs_inv_free(v);
    fz_free_buf(&z);
    /* an object array checked on its own: its PICKLE error, placed in its header */
    fz_member m2[2];
    fz_buf obj = npy_of(OBJ_DICT), arr = npy_of(ARR_DICT);
    m2[0] = (fz_member){"a.npy", arr.p, arr.n, 0, 0, 0, 0, 0};
    m2[1] = (fz_member){"o.npy", obj.p, obj.n, 0, 0, 0, 0, 0};
    z = archive(m2, 2);
    v = walk(z.p, z.n, 0, 0);
    const npzs_inv_member *b = member(v, 1);
    CHECK(b && b->error == NPZS_E_PICKLE && b->rule && !strcmp(b->rule, "PICKLE.object"),
          "an object array: PICKLE.object");
    uint64_t data = m2[1].lfh_off + 30 + 5;
    CHECK(b && b->error_offset == data + b->content_offset && b->content_offset > 10 && b->content_offset < obj.n,
          "an object array: its error inside its header (content offset %llu)",
          b ? (unsigned long long)b->content_offset : 0ull);
    npzs_inv_free(v);
    fz_free_buf(&z);
    fz_free_buf(&obj);
    fz_free_buf(&arr);
}

static void test_truncated(void) {
    fz_member ms[3];
    fz_buf z = multi(0, ms);
    size_t cut = (size_t)ms[2].lfh_off + 40; /* inside w.npy's data */
    npzs_inv *v = walk(z.p, cut, 0, 0);
    CHECK(npzs_inv_count(v) == 3, "INV.truncated: %zu members", npzs_inv_count(v));
    member_error(member(v, 2), NPZS_E_TRUNCATED, "INV.truncated", cut, "INV.truncated (member)");
    listing_error(v, NPZS_E_TRUNCATED, "INV.truncated", cut, "INV.truncated (listing)");
    npzs_inv_free(v);
    /* cut inside the central directory: no member's error, the listing's */
    size_t cd_cut = (size_t)z.n - 30;
    v = walk(z.p, cd_cut, 0, 0);
    CHECK(member(v, 2) && !member(v, 2)->error, "INV.truncated: w.npy whole");
    listing_error(v, NPZS_E_TRUNCATED, "INV.truncated", cd_cut, "INV.truncated (central directory)");
    npzs_inv_free(v);
    fz_free_buf(&z);
}

static void test_limits(void) {
    fz_member ms[3];
    fz_buf z = multi(0, ms);
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_members = 2;
    int rc;
    npzs_inv *v = walk_with(z.p, z.n, 0, 0, &lim, NULL, &rc);
    CHECK(v && npzs_inv_count(v) == 2, "INV.limit (max_members): %zu members", v ? npzs_inv_count(v) : 0);
    listing_error(v, NPZS_E_LIMIT, "INV.limit", ms[2].lfh_off, "INV.limit (max_members)");
    limit_numbers(v, NULL, "max_members", 2, 3, "INV.limit (max_members)");
    npzs_inv_free(v);
    npzs_limits_default(&lim);
    lim.max_name_len = 7; /* "meta.npy" is 8 bytes */
    v = walk_with(z.p, z.n, 0, 0, &lim, NULL, &rc);
    CHECK(v && npzs_inv_count(v) == 0, "INV.limit (max_name_len): %zu members", v ? npzs_inv_count(v) : 0);
    listing_error(v, NPZS_E_LIMIT, "INV.limit", 0, "INV.limit (max_name_len)");
    limit_numbers(v, NULL, "max_name_len", 7, 8, "INV.limit (max_name_len)");
    npzs_inv_free(v);
    npzs_limits_default(&lim);
    lim.max_total_bytes = 100; /* the checked members' content: opt.pkl fits, w.npy does not */
    v = walk_with(z.p, z.n, 0, 0, &lim, NULL, &rc);
    member_error(member(v, 2), NPZS_E_LIMIT, "INV.limit", ms[2].lfh_off + 30 + 5, "INV.limit (max_total_bytes)");
    CHECK(member(v, 1) && !member(v, 1)->error, "INV.limit (max_total_bytes): opt.pkl within it");
    CHECK(npzs_inv_complete(v), "INV.limit (max_total_bytes): the listing goes on");
    /* the content followed before it (opt.pkl's: meta.npy, at offset 0, is not after it, so not
     * checked) and its own declared size */
    limit_numbers(v, member(v, 2), "max_total_bytes", 100, ms[1].content_n + ms[2].content_n,
                  "INV.limit (max_total_bytes)");
    CHECK(npzs_inv_error_limit(v, NULL, NULL, NULL) == 0, "INV.limit (max_total_bytes): the listing's own has none");
    for (size_t step = 1; step <= 7; step += 3) { /* the same numbers whatever the pushes */
        npzs_inv *w = walk_with(z.p, z.n, step, 0, &lim, NULL, &rc);
        CHECK(w && same(v, w), "INV.limit (max_total_bytes): pushes of %zu bytes", step);
        npzs_inv_free(w);
    }
    npzs_inv_free(v);
    /* a declared size of 0 (its sizes in a descriptor): one byte more than the limit */
    fz_buf arr = npy_of(ARR_DICT);
    fz_member dd[2] = {{"opt.pkl", PICKLE, sizeof PICKLE, 0, 0, 0, 0, 0}, /* (at offset 0: not checked) */
                       {"a.npy", arr.p, arr.n, 8, 1, 0, 0, 0}};           /* deflated, its sizes after it */
    fz_buf d = archive(dd, 2);
    npzs_limits_default(&lim);
    lim.max_total_bytes = 100;
    v = walk_with(d.p, d.n, 0, 0, &lim, NULL, &rc);
    limit_numbers(v, member(v, 1), "max_total_bytes", 100, 101, "INV.limit (max_total_bytes, a descriptor)");
    npzs_inv_free(v);
    fz_free_buf(&d);
    fz_free_buf(&arr);
    npzs_limits_default(&lim);
    lim.max_header_size = 20; /* a checked member's own parser: its limit's numbers */
    v = walk_with(z.p, z.n, 0, 0, &lim, NULL, &rc);
    CHECK(member(v, 2) && member(v, 2)->error == NPZS_E_HEADER_TOO_LARGE, "a member's header_too_large: %s",
          member(v, 2) ? npzs_error_name(member(v, 2)->error) : "(none)");
    limit_numbers(v, member(v, 2), "max_header_size", 20, (uint64_t)(ms[2].content[8] | ms[2].content[9] << 8),
                  "a member's header_too_large");
    npzs_inv_free(v);
    fz_free_buf(&z);
}

/* ---- every push size ---- */

static void test_pushes(void) {
    fz_member ms[3];
    fz_buf bufs[4];
    bufs[0] = multi(0, ms);
    bufs[1] = multi(8, ms);
    fz_member dd[2];
    fz_buf arr = npy_of(ARR_DICT);
    dd[0] = (fz_member){"a.npy", arr.p, arr.n, 0, 1, 0, 0, 0}; /* stored, its sizes in a descriptor */
    dd[1] = (fz_member){"b.npy", arr.p, arr.n, 8, 1, 0, 0, 0}; /* deflated, likewise */
    bufs[2] = archive(dd, 2);
    bufs[3] = multi(0, ms);
    bufs[3].n = (size_t)ms[2].lfh_off + 40; /* truncated */
    for (size_t k = 0; k < 4; k++) {
        for (int after = 0; after < 2; after++) {
            uint64_t ca = after ? 0 : UINT64_MAX;
            npzs_inv *whole = walk(bufs[k].p, bufs[k].n, 0, ca);
            CHECK(npzs_inv_count(whole) >= 2, "archive %zu: %zu members", k, npzs_inv_count(whole));
            int bad = 0;
            for (size_t step = 1; step <= bufs[k].n; step++) {
                npzs_inv *v = walk(bufs[k].p, bufs[k].n, step, ca);
                if (!same(whole, v) && bad++ < 3) CHECK(0, "archive %zu: push size %zu lists otherwise", k, step);
                npzs_inv_free(v);
            }
            CHECK(!bad, "archive %zu (checked %d): %d push sizes differ", k, after, bad);
            npzs_inv_free(whole);
        }
    }
    /* the descriptors: sizes and CRC-32s read from them */
    npzs_inv *v = walk(bufs[2].p, bufs[2].n, 0, 0);
    for (size_t i = 0; i < 2; i++) {
        const npzs_inv_member *m = member(v, i);
        CHECK(m && m->size == arr.n && m->csize == dd[i].csize && m->crc32 == dd[i].crc && !m->error &&
                  m->source == (NPZS_INV_LOCAL | NPZS_INV_CENTRAL),
              "descriptor member %zu", i);
    }
    npzs_inv_free(v);
    for (size_t k = 0; k < 4; k++) fz_free_buf(&bufs[k]);
    fz_free_buf(&arr);
}

/* ---- beside the strict parser ---- */

/* The strict verdict of d, with the walker fed beside it (as the command line's --keep-going). */
static int strict(const uint8_t *d, size_t n, size_t step, npzs_inv *v, uint64_t *err_off) {
    npzs_parser *p = npzs_new(NULL, NULL);
    int status = 1, fin = 0;
    for (size_t i = 0; !fin;) {
        size_t k = step && n - i > step ? step : n - i;
        npzs_in in = {d + i, k, 0};
        int rc;
        npzs_event ev;
        while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT && ev.type != NPZS_EV_END) {}
        if (rc == NPZS_NEED_INPUT && i + k == n) {
            npzs_finish(p);
            while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT && ev.type != NPZS_EV_END) {}
        }
        if (rc < 0 && status == 1) {
            status = 0;
            if (v) npzs_inv_check_after(v, npzs_error_offset(p));
        } else if (rc == NPZS_DONE || (rc == NPZS_EVENT && ev.type == NPZS_EV_END)) {
            status = 2;
        }
        if (v) npzs_inv_push(v, d + i, k);
        i += k;
        fin = i >= n;
    }
    if (v) npzs_inv_finish(v);
    *err_off = npzs_error_offset(p);
    int code = npzs_error(p);
    npzs_free(p);
    return status == 2 ? 0 : code;
}

static void test_beside_strict(void) {
    fz_member ms[3];
    fz_buf z = multi(0, ms);
    for (size_t step = 1; step <= z.n; step += 7) {
        uint64_t o1, o2;
        int alone = strict(z.p, z.n, step, NULL, &o1);
        npzs_inv *v = npzs_inv_new(NULL, NULL);
        int beside = strict(z.p, z.n, step, v, &o2);
        CHECK(alone == NPZS_E_PICKLE && beside == alone && o1 == o2, "step %zu: the strict verdict changed", step);
        CHECK(npzs_inv_count(v) == 3 && member(v, 2) && member(v, 2)->checked && member(v, 1)->checked &&
                  !member(v, 0)->checked,
              "step %zu: the members after the error checked", step);
        npzs_inv_free(v);
    }
    fz_free_buf(&z);
}

/* ---- allocation failures ---- */

static void alloc_each(fz_buf z) {
    check_alloc probe = {0, -1, 0, 0};
    npzs_allocator al = {check_malloc, check_free, &probe};
    int rc;
    npzs_inv *v = walk_with(z.p, z.n, 0, 0, NULL, &al, &rc);
    CHECK(v && rc == 0 && npzs_inv_count(v) >= 2, "alloc: the probe walk");
    npzs_inv_free(v);
    CHECK(probe.live == 0 && probe.n > 5, "alloc: %ld blocks leaked, %ld calls", probe.live, probe.n);
    for (long i = 0; i < probe.n; i++) {
        check_alloc c = {0, i, 0, 0};
        npzs_allocator a = {check_malloc, check_free, &c};
        v = walk_with(z.p, z.n, 0, 0, NULL, &a, &rc);
        if (v) {
            const char *rule = NULL;
            int e = npzs_inv_error(v, &rule, NULL);
            int member_nomem = 0;
            for (size_t k = 0; k < npzs_inv_count(v); k++) member_nomem |= npzs_inv_get(v, k)->error == NPZS_E_NOMEM;
            CHECK((e == NPZS_E_NOMEM && rc == NPZS_E_NOMEM && rule && !strncmp(rule, "NOMEM.", 6)) || member_nomem,
                  "alloc %ld: no NOMEM said (listing %s, push %d)", i, npzs_error_name(e), rc);
            npzs_inv_free(v);
        }
        CHECK(c.live == 0, "alloc %ld: %ld blocks leaked", i, c.live);
    }
}

static void test_alloc(void) {
    fz_member ms[3];
    fz_buf z = multi(8, ms); /* deflated: zlib's state and the output chunk too */
    alloc_each(z);
    fz_free_buf(&z);
    fz_buf arr = npy_of(ARR_DICT);
    fz_member dd[2] = {{"a.npy", arr.p, arr.n, 0, 1, 0, 0, 0}, {"b.npy", arr.p, arr.n, 8, 1, 0, 0, 0}};
    z = archive(dd, 2); /* sizes after the data: a deflated member delimited by inflating it */
    alloc_each(z);
    fz_free_buf(&z);
    fz_free_buf(&arr);
}

/* ---- the calls' edges ---- */

static void test_api(void) {
    fz_buf arr = npy_of(ARR_DICT);
    npzs_inv *v = walk(arr.p, arr.n, 0, 0);
    CHECK(!npzs_inv_is_zip(v) && npzs_inv_count(v) == 0 && !npzs_inv_error(v, NULL, NULL),
          "an .npy: not a ZIP, nothing listed");
    npzs_inv_free(v);
    v = walk(arr.p, 0, 0, 0);
    CHECK(!npzs_inv_is_zip(v) && npzs_inv_count(v) == 0 && !npzs_inv_error(v, NULL, NULL), "no bytes: nothing");
    npzs_inv_free(v);
    fz_buf e = {0};
    fz_zip_eocd(&e, 0, 0, 0);
    v = walk(e.p, e.n, 0, 0);
    CHECK(npzs_inv_is_zip(v) && npzs_inv_complete(v) && npzs_inv_count(v) == 0,
          "an empty archive: complete, no member");
    /* reset: a new input, the same walker */
    npzs_inv_reset(v);
    fz_member ms[3];
    fz_buf z = multi(0, ms);
    npzs_inv_check_after(v, 0);
    CHECK(npzs_inv_push(v, z.p, z.n) == 0, "after reset: push");
    npzs_inv_finish(v);
    npzs_inv *fresh = walk(z.p, z.n, 0, 0);
    CHECK(same(v, fresh), "after reset: the listing of a fresh walker");
    npzs_inv_free(fresh);
    npzs_inv_free(v);
    npzs_limits bad;
    npzs_limits_default(&bad);
    bad.max_members = 0;
    CHECK(npzs_inv_new(&bad, NULL) == NULL, "invalid limits: no walker");
    npzs_inv_free(NULL);
    fz_free_buf(&z);
    fz_free_buf(&e);
    fz_free_buf(&arr);
}

int main(int argc, char **argv) {
    if (check_args(&argc, argv)) return 2;
    if (check_group("framing")) test_framing();
    if (check_group("central-only")) test_central_only();
    if (check_group("method")) test_method();
    if (check_group("content")) test_member_content();
    if (check_group("pickle")) test_pickle_member();
    if (check_group("truncated")) test_truncated();
    if (check_group("limits")) test_limits();
    if (check_group("pushes")) test_pushes();
    if (check_group("beside-strict")) test_beside_strict();
    if (check_group("alloc")) test_alloc();
    if (check_group("api")) test_api();
    return check_done("test_inv");
}
