/*
 * test_vlen_api.c -- C-level tests of the vlen-ndarray parser (include/npzstream_vlen.h):
 * spec parsing, every rejection with its code / offset / element, split invariance
 * (whole, 1-byte, 7-byte, 0-byte pushes, random splits; every push a fresh heap copy
 * freed after use so ASan sees any pointer kept into caller memory), the progress
 * rule, sticky errors, NPZS_DONE, reset, limits at their edges, allocator hooks.
 *
 *   build/test_vlen_api [-v] [--quick] [--only SUBSTR] [--list]   last line: "vlen-api: N passed, M failed"
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define NPZS_CHECK_MAIN
#include "../c/check.h"
#include "npzstream_vlen.h"

static int verbose;

/* ---- byte builder ---- */
typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *s, size_t n) {
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 64;
        while (c < b->n + n) c *= 2;
        b->p = realloc(b->p, c);
        if (!b->p) abort();
        b->cap = c;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void put32(buf *b, uint32_t v) {
    uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, t, 4);
}
/* An element of nbytes bytes with a recognisable pattern. */
static void put_elem(buf *b, uint32_t nbytes, unsigned seed) {
    put32(b, nbytes);
    for (uint32_t i = 0; i < nbytes; i++) {
        uint8_t c = (uint8_t)(i * 31u + seed * 7u + 1u);
        put(b, &c, 1);
    }
}

/* ---- running the parser ---- */
typedef struct result {
    int rc; /* final: NPZS_EVENT when END was seen, else the error */
    uint64_t err_off;
    long err_elem;
    uint64_t digest; /* events, DATA merged per element */
    unsigned long events;
    uint32_t count;
    uint32_t elems;
    int violations;       /* contract violations seen while running */
    const char *lim_name; /* a limit's numbers (npzs_vlen_error_limit), NULL for none */
    uint64_t lim_value, lim_needed;
} result;

static void mix(uint64_t *h, uint64_t v) {
    uint64_t x = *h ^ (v + 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    *h = x ^ (x >> 31);
}

static void violation(result *r, const char *what) {
    r->violations++;
    if (r->violations < 4) printf("  contract: %s\n", what);
}

/* Split schedule: step 0 = whole input; otherwise pushes of `step` bytes, with an
 * empty push before each when zeros is set; step < 0: pseudo-random sizes 0..-step. */
static result run(const npzs_vlen_spec *sp, const npzs_vlen_limits *lim, const uint8_t *data, size_t n, long step,
                  int zeros, unsigned seed) {
    result r;
    memset(&r, 0, sizeof r);
    check_alloc ac = {0, -1, 0, 0};
    npzs_allocator al = {check_malloc, check_free, &ac};
    npzs_vlen_parser *p = npzs_vlen_new(sp, lim, &al);
    if (!p) {
        violation(&r, "npzs_vlen_new failed");
        r.rc = -999;
        return r;
    }
    size_t off = 0;
    int finished = 0, zero_next = zeros;
    uint32_t rnd = seed * 2654435761u + 1u;
    uint64_t crc_run = 0, dpos = 0;
    uint32_t cur = 0;
    int in_elem = 0;
    uint64_t consumed = 0;
    r.rc = 1000;
    while (r.rc == 1000) {
        size_t take;
        if (finished) take = 0;
        else if (zero_next) take = 0;
        else if (step == 0) take = n - off;
        else if (step > 0) take = (size_t)step;
        else {
            rnd = rnd * 1103515245u + 12345u;
            take = (rnd >> 16) % (size_t)(-step + 1);
        }
        if (take > n - off) take = n - off;
        if (zeros && !finished) zero_next = !zero_next;
        uint8_t *copy = malloc(take ? take : 1);
        if (take) memcpy(copy, data + off, take);
        npzs_in in = {copy, take, 0};
        if (!finished && off == n && take == 0 && !zero_next) {
            npzs_vlen_finish(p);
            finished = 1;
        }
        for (;;) {
            npzs_vlen_event ev;
            size_t before = in.pos;
            int rc = npzs_vlen_next(p, finished && take == 0 ? NULL : &in, &ev);
            consumed += in.pos - before;
            if (npzs_vlen_consumed(p) != consumed) violation(&r, "consumed() disagrees");
            if (rc == NPZS_NEED_INPUT) {
                if (in.pos != in.size) violation(&r, "NEED_INPUT with input left");
                if (finished) violation(&r, "NEED_INPUT after finish");
                break;
            }
            if (rc < 0) {
                r.rc = rc;
                r.err_off = npzs_vlen_error_offset(p);
                r.err_elem = npzs_vlen_error_element(p);
                int have = npzs_vlen_error_limit(p, &r.lim_name, &r.lim_value, &r.lim_needed);
                if (have != (rc == NPZS_E_LIMIT)) violation(&r, "limit numbers for another error, or none for a limit");
                if (npzs_vlen_error(p) != rc) violation(&r, "npzs_vlen_error != rc");
                npzs_vlen_event e2;
                if (npzs_vlen_next(p, &in, &e2) != rc) violation(&r, "error not sticky");
                if (in_elem) {
                    mix(&r.digest, 0xDA7A);
                    mix(&r.digest, dpos);
                    mix(&r.digest, crc_run);
                }
                break;
            }
            if (rc == NPZS_DONE) {
                violation(&r, "DONE before END");
                r.rc = -998;
                break;
            }
            if (rc != NPZS_EVENT) {
                violation(&r, "unknown return");
                r.rc = -997;
                break;
            }
            r.events++;
            if (ev.type != NPZS_VLEN_EV_DATA && in_elem && dpos) {
                mix(&r.digest, 0xDA7A);
                mix(&r.digest, dpos);
                mix(&r.digest, crc_run);
            }
            if (ev.type != NPZS_VLEN_EV_DATA) mix(&r.digest, (uint64_t)ev.type);
            switch (ev.type) {
            case NPZS_VLEN_EV_CHUNK_BEGIN:
                r.count = ev.count;
                mix(&r.digest, ev.count);
                mix(&r.digest, ev.offset);
                break;
            case NPZS_VLEN_EV_ELEMENT_BEGIN:
                if (ev.index != cur) violation(&r, "ELEMENT_BEGIN index");
                if (!ev.shape || ev.ndim != sp->ndim) violation(&r, "ELEMENT_BEGIN shape");
                else {
                    uint64_t prod = sp->itemsize;
                    for (uint32_t k = 0; k < ev.ndim; k++) {
                        mix(&r.digest, ev.shape[k]);
                        prod *= ev.shape[k];
                        if (k && ev.shape[k] != sp->dims[k]) violation(&r, "fixed dim changed");
                    }
                    if (prod != ev.nbytes) violation(&r, "shape product != nbytes");
                }
                mix(&r.digest, ev.index);
                mix(&r.digest, ev.nbytes);
                mix(&r.digest, ev.offset);
                in_elem = 1;
                dpos = 0;
                crc_run = crc32(0L, Z_NULL, 0);
                break;
            case NPZS_VLEN_EV_DATA:
                if (!in_elem || ev.index != cur) violation(&r, "DATA outside its element");
                if (ev.len == 0 || !ev.data) violation(&r, "empty DATA");
                if (ev.pos != dpos) violation(&r, "DATA pos not contiguous");
                if (!ev.zero_copy || ev.data < copy || ev.data + ev.len > copy + take)
                    violation(&r, "DATA not zero copy into the pushed buffer");
                if (ev.offset != off + (size_t)(ev.data - copy)) violation(&r, "DATA offset");
                crc_run = crc32((uLong)crc_run, ev.data, (uInt)ev.len);
                dpos += ev.len;
                break;
            case NPZS_VLEN_EV_ELEMENT_END:
                if (!in_elem || ev.index != cur) violation(&r, "ELEMENT_END index");
                if (ev.nbytes != dpos) violation(&r, "ELEMENT_END nbytes != DATA bytes");
                if (ev.crc32 != (uint32_t)crc_run) violation(&r, "ELEMENT_END crc != crc of DATA");
                mix(&r.digest, ev.index);
                mix(&r.digest, ev.crc32);
                mix(&r.digest, ev.offset);
                in_elem = 0;
                dpos = 0;
                cur++;
                r.elems++;
                break;
            case NPZS_VLEN_EV_END:
                if (!finished) violation(&r, "END before finish");
                if (ev.count != r.count || cur != r.count) violation(&r, "END count");
                if (ev.offset != n) violation(&r, "END offset != input length");
                mix(&r.digest, ev.count);
                mix(&r.digest, ev.total_bytes);
                r.rc = NPZS_EVENT;
                {
                    npzs_vlen_event e2;
                    if (npzs_vlen_next(p, NULL, &e2) != NPZS_DONE) violation(&r, "no DONE after END");
                }
                break;
            default: violation(&r, "unknown event type");
            }
            if (r.rc != 1000) break;
        }
        off += in.pos;
        free(copy);
        if (r.rc == 1000 && finished) {
            violation(&r, "no verdict after finish");
            r.rc = -996;
        }
    }
    npzs_vlen_free(p);
    if (ac.live != 0) violation(&r, "allocation leak");
    return r;
}

static int same(const result *a, const result *b) {
    return a->rc == b->rc && a->err_off == b->err_off && a->err_elem == b->err_elem && a->digest == b->digest &&
           a->count == b->count && a->elems == b->elems && a->lim_name == b->lim_name && a->lim_value == b->lim_value &&
           a->lim_needed == b->lim_needed;
}

/* Run under every schedule; all must agree and be contract-clean.  Returns the whole-input result. */
static result run_all(const char *name, const npzs_vlen_spec *sp, const npzs_vlen_limits *lim, const buf *b) {
    result w = run(sp, lim, b->p, b->n, 0, 0, 0);
    CHECK(w.violations == 0, "%s: contract violations (whole input)", name);
    static const long steps[] = {1, 2, 3, 4, 5, 7, 13, -9, -40};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        for (int z = 0; z < 2; z++) {
            result s = run(sp, lim, b->p, b->n, steps[i], z, (unsigned)i + 1);
            CHECK(s.violations == 0, "%s: contract violations (step %ld zeros %d)", name, steps[i], z);
            CHECK(same(&w, &s), "%s: split step %ld zeros %d differs: rc %d/%d off %" PRIu64 "/%" PRIu64, name,
                  steps[i], z, w.rc, s.rc, w.err_off, s.err_off);
        }
    }
    if (verbose) printf("  %s: rc %d off %" PRIu64 " elems %u\n", name, w.rc, w.err_off, (unsigned)w.elems);
    return w;
}

static npzs_vlen_spec spec_of(const char *dt, const char *pat) {
    npzs_vlen_spec s;
    size_t at;
    const char *why;
    if (npzs_vlen_spec_parse(&s, dt, pat, &at, &why) != 0) {
        printf("FAIL spec %s %s: %s\n", dt, pat, why);
        exit(1);
    }
    return s;
}

/* ---- tests ---- */
static void test_spec(void) {
    static const struct {
        const char *dt, *pat;
        int rc;
        size_t at;
        const char *str;
        uint32_t ndim;
        uint64_t row;
    } t[] = {
        {"float32", "null,2", 0, 0, "<f4", 2, 8},
        {"float32", "[null, 2]", 0, 0, "<f4", 2, 8},
        {"<f4", " [ null , 3 , 4 ] ", 0, 0, "<f4", 3, 48},
        {"uint64", "null", 0, 0, "<u8", 1, 8},
        {"bool", "null,5", 0, 0, "|b1", 2, 5},
        {"|b1", "null", 0, 0, "|b1", 1, 1},
        {"<i1", "null", 0, 0, "|i1", 1, 1},
        {"|u1", "null", 0, 0, "|u1", 1, 1},
        {"int8", "null", 0, 0, "|i1", 1, 1},
        {"int16", "null", 0, 0, "<i2", 1, 2},
        {"int32", "null", 0, 0, "<i4", 1, 4},
        {"int64", "null", 0, 0, "<i8", 1, 8},
        {"uint8", "null", 0, 0, "|u1", 1, 1},
        {"uint16", "null", 0, 0, "<u2", 1, 2},
        {"uint32", "null", 0, 0, "<u4", 1, 4},
        {"float16", "null", 0, 0, "<f2", 1, 2},
        {"float64", "null", 0, 0, "<f8", 1, 8},
        {"complex64", "null,1", 0, 0, "<c8", 2, 8},
        {"complex128", "null", 0, 0, "<c16", 1, 16},
        {"float128", "null", NPZS_E_VLEN_BAD_DTYPE, 0, NULL, 0, 0},
        {">f4", "null", NPZS_E_VLEN_BAD_DTYPE, 0, NULL, 0, 0},
        {"=f4", "null", NPZS_E_VLEN_BAD_DTYPE, 0, NULL, 0, 0},
        {"<f4 ", "null", NPZS_E_VLEN_BAD_DTYPE, 0, NULL, 0, 0},
        {"", "null", NPZS_E_VLEN_BAD_DTYPE, 0, NULL, 0, 0},
        {"f4", "null", NPZS_E_VLEN_BAD_DTYPE, 0, NULL, 0, 0},
        {"object", "null", NPZS_E_VLEN_BAD_DTYPE, 0, NULL, 0, 0},
        {"float32", "", NPZS_E_BAD_SHAPE, 0, NULL, 0, 0},
        {"float32", "2,null", NPZS_E_BAD_SHAPE, 0, NULL, 0, 0},
        {"float32", "null,null", NPZS_E_BAD_SHAPE, 5, NULL, 0, 0},
        {"float32", "null,2,null", NPZS_E_BAD_SHAPE, 7, NULL, 0, 0},
        {"float32", "2,3", NPZS_E_BAD_SHAPE, 0, NULL, 0, 0},
        {"float32", "null,0", NPZS_E_BAD_SHAPE, 5, NULL, 0, 0},
        {"float32", "null,02", NPZS_E_BAD_SHAPE, 5, NULL, 0, 0},
        {"float32", "null,-2", NPZS_E_BAD_SHAPE, 5, NULL, 0, 0},
        {"float32", "null,+2", NPZS_E_BAD_SHAPE, 5, NULL, 0, 0},
        {"float32", "null,", NPZS_E_BAD_SHAPE, 5, NULL, 0, 0},
        {"float32", "null,,2", NPZS_E_BAD_SHAPE, 5, NULL, 0, 0},
        {"float32", "null 2", NPZS_E_BAD_SHAPE, 5, NULL, 0, 0},
        {"float32", "[null,2", NPZS_E_BAD_SHAPE, 7, NULL, 0, 0},
        {"float32", "null,2]", NPZS_E_BAD_SHAPE, 6, NULL, 0, 0},
        {"float32", "[null]x", NPZS_E_BAD_SHAPE, 6, NULL, 0, 0},
        {"float32", "[]", NPZS_E_BAD_SHAPE, 1, NULL, 0, 0},
        {"float32", "None,2", NPZS_E_BAD_SHAPE, 0, NULL, 0, 0},
        {"float32", "nul", NPZS_E_BAD_SHAPE, 0, NULL, 0, 0},
        {"float32", "null,2.5", NPZS_E_BAD_SHAPE, 6, NULL, 0, 0},
        {"float32", "null,4294967296,4294967296", NPZS_E_SIZE_OVERFLOW, 16, NULL, 0, 0},
        {"uint8", "null,99999999999999999999999", NPZS_E_SIZE_OVERFLOW, 5, NULL, 0, 0},
        {"uint8", "null,9223372036854775808", 0, 0, "|u1", 2, UINT64_C(9223372036854775808)},
        {"uint16", "null,9223372036854775808", NPZS_E_SIZE_OVERFLOW, 5, NULL, 0, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        npzs_vlen_spec s;
        size_t at = 12345;
        const char *why = NULL;
        int rc = npzs_vlen_spec_parse(&s, t[i].dt, t[i].pat, &at, &why);
        CHECK(rc == t[i].rc, "spec %s '%s': rc %d, want %d (%s)", t[i].dt, t[i].pat, rc, t[i].rc, why ? why : "");
        if (rc == 0 && t[i].rc == 0) {
            CHECK(!strcmp(s.dtype, t[i].str) && s.ndim == t[i].ndim && s.row_bytes == t[i].row,
                  "spec %s '%s': got %s ndim %u row %" PRIu64, t[i].dt, t[i].pat, s.dtype, (unsigned)s.ndim,
                  s.row_bytes);
        } else if (rc < 0 && rc == t[i].rc) {
            CHECK(at == t[i].at && why && *why, "spec %s '%s': at %zu want %zu", t[i].dt, t[i].pat, at, t[i].at);
        }
    }
    /* 32 dimensions are fine, 33 are not */
    char pat[256] = "null";
    for (int k = 1; k < 32; k++) strcat(pat, ",1");
    npzs_vlen_spec s;
    size_t at = 0;
    CHECK(npzs_vlen_spec_parse(&s, "int8", pat, &at, NULL) == 0 && s.ndim == 32, "32 dims");
    strcat(pat, ",1");
    CHECK(npzs_vlen_spec_parse(&s, "int8", pat, &at, NULL) == NPZS_E_BAD_SHAPE && at == 4 + 31 * 2 + 1,
          "33 dims: at %zu", at);
    CHECK(npzs_vlen_spec_parse(NULL, "int8", "null", NULL, NULL) == NPZS_E_BAD_CALL, "NULL spec");
    CHECK(npzs_vlen_spec_parse(&s, NULL, "null", NULL, NULL) == NPZS_E_BAD_CALL, "NULL dtype");
    CHECK(!strcmp(npzs_vlen_error_name(NPZS_E_VLEN_BAD_DTYPE), "bad_dtype"), "error name");
    CHECK(!strcmp(npzs_vlen_error_name(NPZS_E_TRUNCATED), "truncated"), "core error name");
    CHECK(!strcmp(npzs_vlen_error_name(-99), "unknown"), "unknown error name");
    CHECK(npzs_vlen_strerror(NPZS_E_VLEN_BAD_DTYPE)[0] != 0, "strerror");
    CHECK(!strcmp(npzs_vlen_strerror(NPZS_E_LIMIT), npzs_strerror(NPZS_E_LIMIT)), "core strerror");
}

typedef struct rej {
    const char *name;
    int rc;
    uint64_t off;
    long elem;
} rej;

static void expect(const char *name, const npzs_vlen_spec *sp, const npzs_vlen_limits *lim, const buf *b, int rc,
                   uint64_t off, long elem, uint32_t elems) {
    result r = run_all(name, sp, lim, b);
    CHECK(r.rc == rc, "%s: rc %d (%s), want %d (%s)", name, r.rc, npzs_vlen_error_name(r.rc), rc,
          npzs_vlen_error_name(rc));
    if (rc < 0) {
        CHECK(r.err_off == off, "%s: offset %" PRIu64 ", want %" PRIu64, name, r.err_off, off);
        CHECK(r.err_elem == elem, "%s: element %ld, want %ld", name, r.err_elem, elem);
    }
    CHECK(r.elems == elems, "%s: %u complete elements, want %u", name, (unsigned)r.elems, (unsigned)elems);
}

/* expect(), for a limit: its numbers too (npzs_vlen_error_limit), the same under every split. */
static void expect_limit(const char *name, const npzs_vlen_spec *sp, const npzs_vlen_limits *lim, const buf *b,
                         uint64_t off, long elem, uint32_t elems, const char *lname, uint64_t value, uint64_t needed) {
    expect(name, sp, lim, b, NPZS_E_LIMIT, off, elem, elems);
    result r = run(sp, lim, b->p, b->n, 0, 0, 0);
    CHECK(r.lim_name && !strcmp(r.lim_name, lname) && r.lim_value == value && r.lim_needed == needed,
          "%s: numbers %s %" PRIu64 " %" PRIu64 ", want %s %" PRIu64 " %" PRIu64, name,
          r.lim_name ? r.lim_name : "NULL", r.lim_value, r.lim_needed, lname, value, needed);
}

static void test_chunks(void) {
    npzs_vlen_spec f2 = spec_of("float32", "null,2"); /* row 8 */
    npzs_vlen_spec u8 = spec_of("uint8", "null");     /* row 1 */
    buf b = {0};

    /* valid */
    b.n = 0;
    put32(&b, 0);
    expect("empty chunk", &f2, NULL, &b, NPZS_EVENT, 0, 0, 0);
    b.n = 0;
    put32(&b, 3);
    put_elem(&b, 0, 1);
    put_elem(&b, 0, 2);
    put_elem(&b, 0, 3);
    expect("three empty elements", &f2, NULL, &b, NPZS_EVENT, 0, 0, 3);
    b.n = 0;
    put32(&b, 4);
    put_elem(&b, 24, 1);
    put_elem(&b, 0, 2);
    put_elem(&b, 8, 3);
    put_elem(&b, 800, 4);
    expect("mixed", &f2, NULL, &b, NPZS_EVENT, 0, 0, 4);
    b.n = 0;
    put32(&b, 2);
    put_elem(&b, 1, 1);
    put_elem(&b, 255, 2);
    expect("uint8 1-D", &u8, NULL, &b, NPZS_EVENT, 0, 0, 2);

    /* truncated */
    b.n = 0;
    expect("empty input", &f2, NULL, &b, NPZS_E_TRUNCATED, 0, -1, 0);
    b.n = 0;
    put32(&b, 1);
    b.n = 3;
    expect("count cut", &f2, NULL, &b, NPZS_E_TRUNCATED, 0, -1, 0);
    b.n = 0;
    put32(&b, 2);
    expect("no elements", &f2, NULL, &b, NPZS_E_TRUNCATED, 4, 0, 0);
    b.n = 0;
    put32(&b, 2);
    put_elem(&b, 8, 1);
    expect("one element missing", &f2, NULL, &b, NPZS_E_TRUNCATED, 16, 1, 1);
    b.n = 0;
    put32(&b, 2);
    put_elem(&b, 8, 1);
    put32(&b, 16);
    b.n -= 2;
    expect("length cut", &f2, NULL, &b, NPZS_E_TRUNCATED, 16, 1, 1);
    b.n = 0;
    put32(&b, 2);
    put_elem(&b, 8, 1);
    put_elem(&b, 16, 2);
    b.n -= 1;
    expect("data cut", &f2, NULL, &b, NPZS_E_TRUNCATED, 16, 1, 1);
    b.n = 0;
    put32(&b, 1);
    put32(&b, 16);
    expect("length, no data", &f2, NULL, &b, NPZS_E_TRUNCATED, 4, 0, 0);
    b.n = 0;
    put32(&b, 0xFFFFFFFFu);
    expect("huge count", &f2, NULL, &b, NPZS_E_TRUNCATED, 4, 0, 0);
    b.n = 0;
    put32(&b, 1);
    put32(&b, 0xFFFFFFF8u);
    put_elem(&b, 0, 0);
    expect("huge length", &f2, NULL, &b, NPZS_E_TRUNCATED, 4, 0, 0);

    /* size mismatch */
    b.n = 0;
    put32(&b, 2);
    put_elem(&b, 8, 1);
    put_elem(&b, 12, 2);
    expect("length % 8", &f2, NULL, &b, NPZS_E_SIZE_MISMATCH, 16, 1, 1);
    b.n = 0;
    put32(&b, 1);
    put_elem(&b, 4, 1);
    expect("half a row", &f2, NULL, &b, NPZS_E_SIZE_MISMATCH, 4, 0, 0);
    b.n = 0;
    put32(&b, 1);
    put32(&b, 0xFFFFFFFFu);
    expect("odd huge length", &f2, NULL, &b, NPZS_E_SIZE_MISMATCH, 4, 0, 0);

    /* trailing */
    b.n = 0;
    put32(&b, 0);
    put(&b, "x", 1);
    expect("trailing after empty chunk", &f2, NULL, &b, NPZS_E_TRAILING_DATA, 4, -1, 0);
    b.n = 0;
    put32(&b, 1);
    put_elem(&b, 8, 1);
    put(&b, "\0\0\0\0", 4);
    expect("trailing after last", &f2, NULL, &b, NPZS_E_TRAILING_DATA, 16, -1, 1);

    /* limits: at the edge accepted, one over rejected */
    npzs_vlen_limits lim;
    npzs_vlen_limits_default(&lim);
    lim.max_elements = 2;
    b.n = 0;
    put32(&b, 2);
    put_elem(&b, 0, 1);
    put_elem(&b, 8, 1);
    expect("max_elements edge", &f2, &lim, &b, NPZS_EVENT, 0, 0, 2);
    b.n = 0;
    put32(&b, 3);
    put_elem(&b, 0, 1);
    put_elem(&b, 8, 1);
    put_elem(&b, 8, 1);
    expect_limit("max_elements over", &f2, &lim, &b, 0, -1, 0, "max_elements", 2, 3);
    npzs_vlen_limits_default(&lim);
    lim.max_element_bytes = 16;
    b.n = 0;
    put32(&b, 2);
    put_elem(&b, 16, 1);
    put_elem(&b, 24, 2);
    expect_limit("max_element_bytes", &f2, &lim, &b, 24, 1, 1, "max_element_bytes", 16, 24);
    npzs_vlen_limits_default(&lim);
    b.n = 0;
    put32(&b, 3);
    put_elem(&b, 8, 1);
    put_elem(&b, 16, 2);
    put_elem(&b, 0, 3);
    lim.max_total_bytes = b.n;
    expect("max_total_bytes edge", &f2, &lim, &b, NPZS_EVENT, 0, 0, 3);
    lim.max_total_bytes = b.n - 1;
    expect_limit("max_total_bytes over", &f2, &lim, &b, 16, 1, 1, "max_total_bytes", b.n - 1, b.n);
    lim.max_total_bytes = 11; /* 4 + 3*4 = 16 > 11: the count alone is too much */
    expect_limit("max_total_bytes count", &f2, &lim, &b, 0, -1, 0, "max_total_bytes", 11, 16);
    npzs_vlen_limits_default(&lim);
    b.n = 0;
    put32(&b, 0xFFFFFFFFu);
    expect("default total limit admits any count", &f2, &lim, &b, NPZS_E_TRUNCATED, 4, 0, 0);
    lim.max_total_bytes = UINT64_C(1) << 32;
    expect_limit("count x 4 over total", &f2, &lim, &b, 0, -1, 0, "max_total_bytes", UINT64_C(1) << 32,
                 4 + 4 * (uint64_t)0xFFFFFFFFu);
    /* divisibility is checked before the limits */
    npzs_vlen_limits_default(&lim);
    lim.max_element_bytes = 4;
    b.n = 0;
    put32(&b, 1);
    put_elem(&b, 12, 1);
    expect("mismatch before limit", &f2, &lim, &b, NPZS_E_SIZE_MISMATCH, 4, 0, 0);
    free(b.p);
}

static void test_api(void) {
    npzs_vlen_spec f2 = spec_of("float32", "null,2");
    npzs_vlen_event ev;
    CHECK(npzs_vlen_next(NULL, NULL, &ev) == NPZS_E_BAD_CALL, "NULL parser");
    CHECK(npzs_vlen_error(NULL) == NPZS_E_BAD_CALL, "error(NULL)");
    npzs_vlen_free(NULL);
    npzs_vlen_finish(NULL);
    npzs_vlen_reset(NULL);

    /* invalid spec / limits / allocator */
    npzs_vlen_spec bad = f2;
    bad.row_bytes = 4;
    CHECK(npzs_vlen_new(&bad, NULL, NULL) == NULL, "inconsistent spec accepted");
    bad = f2;
    bad.dims[1] = 0;
    CHECK(npzs_vlen_new(&bad, NULL, NULL) == NULL, "zero dim accepted");
    bad = f2;
    memcpy(bad.dtype, ">f4", 4);
    CHECK(npzs_vlen_new(&bad, NULL, NULL) == NULL, "bad dtype accepted");
    bad = f2;
    bad.ndim = 0;
    CHECK(npzs_vlen_new(&bad, NULL, NULL) == NULL, "ndim 0 accepted");
    CHECK(npzs_vlen_new(NULL, NULL, NULL) == NULL, "NULL spec accepted");
    npzs_vlen_limits lim;
    npzs_vlen_limits_default(&lim);
    lim.max_total_bytes = 3;
    CHECK(npzs_vlen_new(&f2, &lim, NULL) == NULL, "max_total_bytes 3 accepted");
    npzs_allocator half = {check_malloc, NULL, NULL};
    CHECK(npzs_vlen_new(&f2, NULL, &half) == NULL, "allocator without free accepted");
    check_alloc ac = {0, 0, 0, 0};
    npzs_allocator al = {check_malloc, check_free, &ac};
    CHECK(npzs_vlen_new(&f2, NULL, &al) == NULL && ac.live == 0, "failing allocator");
    ac.fail_at = -1;
    ac.n = 0;
    npzs_vlen_parser *p = npzs_vlen_new(&f2, NULL, &al);
    CHECK(p && ac.n == 1 && ac.live == 1, "one allocation");
    if (!p) return;

    /* bad arguments are sticky bad_call */
    uint8_t chunk[12] = {1, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9};
    npzs_in in = {chunk, 4, 5};
    CHECK(npzs_vlen_next(p, &in, &ev) == NPZS_E_BAD_CALL, "pos > size");
    CHECK(npzs_vlen_next(p, NULL, &ev) == NPZS_E_BAD_CALL, "bad_call sticky");
    CHECK(npzs_vlen_error(p) == NPZS_E_BAD_CALL, "error code");

    /* reset: a new chunk on the same parser */
    npzs_vlen_reset(p);
    CHECK(npzs_vlen_error(p) == 0 && npzs_vlen_consumed(p) == 0, "reset clears");
    in = (npzs_in){chunk, 8, 0};
    CHECK(npzs_vlen_next(p, &in, &ev) == NPZS_EVENT && ev.type == NPZS_VLEN_EV_CHUNK_BEGIN && ev.count == 1,
          "CHUNK_BEGIN");
    CHECK(npzs_vlen_next(p, &in, &ev) == NPZS_EVENT && ev.type == NPZS_VLEN_EV_ELEMENT_BEGIN && ev.nbytes == 0 &&
              ev.shape[0] == 0 && ev.shape[1] == 2 && ev.offset == 4,
          "ELEMENT_BEGIN empty");
    CHECK(npzs_vlen_next(p, &in, &ev) == NPZS_EVENT && ev.type == NPZS_VLEN_EV_ELEMENT_END && ev.crc32 == 0 &&
              ev.offset == 8,
          "ELEMENT_END empty");
    CHECK(npzs_vlen_next(p, &in, &ev) == NPZS_NEED_INPUT && in.pos == 8, "NEED_INPUT before finish");
    npzs_vlen_finish(p);
    CHECK(npzs_vlen_next(p, NULL, &ev) == NPZS_EVENT && ev.type == NPZS_VLEN_EV_END && ev.offset == 8 &&
              ev.count == 1 && ev.total_bytes == 0,
          "END");
    CHECK(npzs_vlen_next(p, NULL, &ev) == NPZS_DONE, "DONE");
    in = (npzs_in){chunk, 0, 0};
    CHECK(npzs_vlen_next(p, &in, &ev) == NPZS_DONE, "DONE with an empty push");
    in = (npzs_in){chunk + 8, 4, 0};
    CHECK(npzs_vlen_next(p, &in, &ev) == NPZS_E_TRAILING_DATA && npzs_vlen_error_offset(p) == 8,
          "bytes after END are trailing_data");
    CHECK(npzs_vlen_error_message(p)[0] != 0 && npzs_vlen_error_element(p) == -1, "message");

    /* CRC of a real element matches zlib */
    npzs_vlen_reset(p);
    uint8_t c2[4 + 4 + 16];
    memset(c2, 0, sizeof c2);
    c2[0] = 1;
    c2[4] = 16;
    for (int i = 0; i < 16; i++) c2[8 + i] = (uint8_t)(i * 17);
    in = (npzs_in){c2, sizeof c2, 0};
    uint32_t got = 0;
    int rc;
    npzs_vlen_finish(p);
    while ((rc = npzs_vlen_next(p, &in, &ev)) == NPZS_EVENT && ev.type != NPZS_VLEN_EV_END)
        if (ev.type == NPZS_VLEN_EV_ELEMENT_END) got = ev.crc32;
    CHECK(rc == NPZS_EVENT && got == (uint32_t)crc32(0L, c2 + 8, 16), "element crc32");
    npzs_vlen_free(p);
    CHECK(ac.live == 0, "freed");
}

/* Random chunks, valid and damaged, under every schedule. */
static void test_random(int rounds) {
    static const char *const pats[] = {"null", "null,2", "null,3,1", "[null, 1, 5]"};
    static const char *const dts[] = {"uint8", "float32", "int16", "complex128"};
    uint32_t rnd = 12345;
    buf b = {0};
    for (int r = 0; r < rounds; r++) {
        npzs_vlen_spec sp = spec_of(dts[r % 4], pats[(r / 4) % 4]);
        rnd = rnd * 1103515245u + 12345u;
        uint32_t count = (rnd >> 16) % 6;
        b.n = 0;
        put32(&b, count);
        for (uint32_t i = 0; i < count; i++) {
            rnd = rnd * 1103515245u + 12345u;
            uint32_t rows = (rnd >> 16) % 4;
            put_elem(&b, (uint32_t)(rows * sp.row_bytes), i);
        }
        /* damage: flip a byte, cut, or append */
        rnd = rnd * 1103515245u + 12345u;
        unsigned how = (rnd >> 16) % 4;
        if (how == 1 && b.n) b.p[(rnd >> 8) % b.n] ^= (uint8_t)(1u << ((rnd >> 4) % 8));
        else if (how == 2 && b.n) b.n -= 1 + (rnd >> 8) % b.n;
        else if (how == 3) put(&b, "\1", 1);
        char name[64];
        snprintf(name, sizeof name, "random %d", r);
        result w = run_all(name, &sp, NULL, &b);
        if (how == 0) CHECK(w.rc == NPZS_EVENT && w.elems == count, "%s: valid chunk rejected (%d)", name, w.rc);
    }
    free(b.p);
}

int main(int argc, char **argv) {
    int quick = 0;
    if (check_args(&argc, argv)) return 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) verbose = 1;
        if (!strcmp(argv[i], "--quick")) quick = 1;
    }
    if (check_group("spec")) test_spec();
    if (check_group("chunks")) test_chunks();
    if (check_group("api")) test_api();
    if (check_group("random")) test_random(quick ? 40 : 300);
    return check_done("vlen-api");
}
