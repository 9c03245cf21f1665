/*
 * test_policy.c -- policies, hashes and sniffing, in C (make check; make test, plain and under
 * ASan+UBSan):
 *   - the compiler: every fault of a policy's JSON names its line, column and field; every policy
 *     shipped (tests/bad/policies, examples/policies) compiles; allocation failures at every
 *     allocation end in NULL with nothing leaked;
 *   - every vector of tests/vectors/MANIFEST.tsv that names a policy, through fuzz/common.c's
 *     driver: the manifest's verdict, and the same events (data before an error included) whole,
 *     under split schedules with 0- and 1-byte pushes, at every push size for the small ones, with
 *     only MEMBER_END asked for, into destinations, through the parallel helper, with hashing;
 *     without its policy, the same verdict unless the policy's rejection came first;
 *   - the value checks of values.c against a plain reference, for every float and integer type and
 *     byte order, with the failing element at every position around the vector blocks, split at
 *     every offset;
 *   - SHA-256 against known digests, the same stored, deflated and written to a pipe;
 *   - the sniff of every kind of blob; the API's misuse (CALL.policy, CALL.hash); a policy shared
 *     by parsers on two threads; a parser reset keeps its policy; the event layout of 0.4.0.
 * usage: test_policy [--vectors DIR] [--sha256-absent: only the refusals of a library without
 * SHA-256, build/nocrypto's]; last line "policy: N passed, M failed".
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common.h"
#include "npzstream.h"

static int passed, failed;
#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (cond) {                                                           \
            passed++;                                                         \
        } else {                                                              \
            failed++;                                                         \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                       \
            printf(__VA_ARGS__);                                              \
            printf("\n");                                                     \
        }                                                                     \
    } while (0)

static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    uint8_t *b = malloc(cap);
    for (size_t r; b && (r = fread(b + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            uint8_t *nb = realloc(b, cap *= 2);
            if (!nb) { free(b); b = NULL; }
            else b = nb;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

static npzs_policy *compile(const char *json, npzs_policy_error *e) {
    return npzs_policy_new(json, strlen(json), NULL, e);
}

/* ---- the compiler ------------------------------------------------------------------------------ */

static void test_compile_faults(void) {
    static const struct {
        const char *json;
        unsigned line, column;
        const char *path, *msg;
    } t[] = {
        {"", 1, 1, "", "expected a value"},
        {"[]", 1, 1, "", "expected a JSON object"},
        {"{\"members\": {}} x", 1, 17, "", "text after the JSON value"},
        {"{\"members\": {\"a\": {}},\n \"members\": {}}", 2, 2, "", "duplicate key"},
        {"{\"membrs\": {}}", 1, 2, "membrs", "unknown field 'membrs'"},
        {"{\"members\": {\"w\": {\"dtype\": [\"flaot32\"]}}}", 1, 30, "members.w.dtype[0]", "unknown dtype name"},
        {"{\"members\": {\"w\": {\"dtype\": [\"<i1\"]}}}", 1, 30, "members.w.dtype[0]", "'|'"},
        {"{\"members\": {\"w\": {\"dtype\": [\"|f4\"]}}}", 1, 30, "members.w.dtype[0]", "byte order"},
        {"{\"members\": {\"w\": {\"dtype\": [\"<M8[fortnight]\"]}}}", 1, 30, "members.w.dtype[0]", "unit"},
        {"{\"members\": {\"w\": {\"dtype\": []}}}", 1, 29, "members.w.dtype", "allows nothing"},
        {"{\"members\": {\"w\": {\"shape\": [\"N\", -1]}}}", 1, 35, "members.w.shape[1]", "non-negative integer"},
        {"{\"members\": {\"w\": {\"shape\": [\"...\", \"...\"]}}}", 1, 37, "members.w.shape[1]", "at most one"},
        {"{\"members\": {\"w\": {\"shape\": [\"2x\"]}}}", 1, 30, "members.w.shape[0]", "a dimension is"},
        {"{\"members\": {\"w\": {\"range\": [9, 0]}}}", 1, 29, "members.w.range", "min is larger"},
        {"{\"members\": {\"w\": {\"sha256\": \"abc\"}}}", 1, 30, "members.w.sha256", "64 hex"},
        {"{\"members\": {\"w\": {\"kind\": \"blob\", \"dtype\": [\"<f4\"]}}}", 1, 28, "members.w", "a blob has no dtype"},
        {"{\"members\": {\"w*\": {\"optional\": true}}}", 1, 20, "members.w*", "never required"},
        {"{\"members\": {\"\": {}}}", 1, 18, "members.", "empty key"},
        {"{\"dims\": {\"N\": [5, 1]}}", 1, 16, "dims.N", "min is larger"},
        {"{\"dims\": {\"2N\": 3}}", 1, 17, "dims.2N", "letters"},
        {"{\"max_total_bytes\": \"12Qi\"}", 1, 21, "max_total_bytes", "suffix"},
        {"{\"max_members\": 0}", 1, 17, "max_members", "from 1"},
        {"{\"allow_blobs\": [\"pdf\"]}", 1, 18, "allow_blobs", "a blob kind"},
        {"{\"allow_blobs\": 1}", 1, 17, "allow_blobs", "true or false"},
        {"{\"format\": \"zip\"}", 1, 12, "format", "\"npy\", \"npz\""},
        {"{\"array\": {\"optional\": true}}", 1, 24, "array.optional", "for members"},
        {"{\"array\": {\"kind\": \"blob\"}}", 1, 20, "array", "a .npy file is an array"},
        {"{\"members\": {\"w\": {\"finite\": 1}}}", 1, 30, "members.w.finite", "true or false"},
        {"{\"members\": {\"w\": {}},}", 1, 23, "", "trailing comma"},
        {"{\"a\": \"\\ud800\"}", 1, 8, "", "surrogate"},
        {"{\"a\": \"\\u0000\"}", 1, 8, "", "\\u0000"},
        {"{\"a\": \"x\ty\"}", 1, 9, "", "control character"},
        {"{\"a\": 01}", 1, 8, "", "expected ',' or '}'"},
        {"{\"a\": 1.}", 1, 9, "", "decimal point"},
        {"{\"a\": tru}", 1, 7, "", "not a JSON value"},
        {"{\"a\": \"\xc3(\"}", 1, 8, "", "UTF-8"},
        {"{\"members\": {\"w\": {\"dtype\": [[[\"x\"]]]}}}", 1, 31, "members.w.dtype[0][0]", "[name, type]"},
        {"{\"members\": {\"w\": {\"dtype\": [[[\"x\", \"<f4\"], [\"x\", \"<i4\"]]]}}}", 1, 46, "members.w.dtype[0][1]",
         "two fields"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        npzs_policy_error e;
        npzs_policy *p = compile(t[i].json, &e);
        CHECK(!p, "fault %zu compiled", i);
        npzs_policy_free(p);
        CHECK(e.line == t[i].line && e.column == t[i].column && !strcmp(e.path, t[i].path) && strstr(e.message, t[i].msg),
              "fault %zu (%s): got %u:%u '%s': %s", i, t[i].json, e.line, e.column, e.path, e.message);
    }
    /* deep nesting is bounded, a long text refused, NULL with a length refused */
    char deep[300];
    size_t k = 0;
    deep[k++] = '{';
    deep[k++] = '"';
    deep[k++] = 'a';
    deep[k++] = '"';
    deep[k++] = ':';
    for (int d = 0; d < 100; d++) deep[k++] = '[';
    deep[k] = 0;
    npzs_policy_error e;
    CHECK(!compile(deep, &e) && strstr(e.message, "nested too deeply"), "deep nesting: %s", e.message);
    CHECK(!npzs_policy_new(NULL, 3, NULL, &e), "NULL text with a length");
    CHECK(!npzs_policy_new("{}", (1u << 20) + 1, NULL, &e) && strstr(e.message, "1 MiB"), "a text over 1 MiB");
    npzs_policy *p = npzs_policy_new("{}", 2, NULL, NULL);
    CHECK(p != NULL, "the empty policy");
    npzs_policy_free(p);
    npzs_policy_free(NULL);
}

/* every policy the project ships compiles */
static void test_shipped(const char *dir) {
    static const char *const names[] = {
        "tests/bad/policies/mnist.json", "examples/policies/mnist.json", "examples/policies/keras-weights.json",
        "examples/policies/float32-arrays.json", "examples/policies/pinned-model.json"};
    (void)dir;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n;
        uint8_t *t = slurp(names[i], &n);
        CHECK(t != NULL, "cannot read %s", names[i]);
        if (!t) continue;
        npzs_policy_error e;
        npzs_policy *p = npzs_policy_new((const char *)t, n, NULL, &e);
        CHECK(p != NULL, "%s:%u:%u: %s: %s", names[i], e.line, e.column, e.path, e.message);
        npzs_policy_free(p);
        free(t);
    }
}

/* a failing allocator: every allocation of npzs_policy_new fails once, in turn */
typedef struct fa {
    long at, count, live;
} fa;
static void *fa_alloc(void *o, size_t n) {
    fa *a = o;
    if (a->count++ == a->at) return NULL;
    a->live++;
    return malloc(n);
}
static void fa_free(void *o, void *p) {
    fa *a = o;
    if (p) a->live--;
    free(p);
}

static void test_alloc_failures(void) {
    size_t n;
    uint8_t *t = slurp("tests/bad/policies/mnist.json", &n);
    CHECK(t != NULL, "mnist.json");
    if (!t) return;
    long allocs = -1;
    for (long at = 0; at < 1000; at++) {
        fa a = {at, 0, 0};
        npzs_allocator al = {fa_alloc, fa_free, &a};
        npzs_policy_error e;
        npzs_policy *p = npzs_policy_new((const char *)t, n, &al, &e);
        if (p) {
            allocs = a.count;
            npzs_policy_free(p);
            CHECK(a.live == 0, "leak after a full compile");
            break;
        }
        CHECK(a.live == 0 && strstr(e.message, "out of memory"), "allocation %ld failed: %ld live, '%s'", at, a.live,
              e.message);
    }
    CHECK(allocs > 0, "no compile succeeded");
    /* the parser's state for a policy: NOMEM.policy when its allocation fails */
    npzs_policy *pol = npzs_policy_new((const char *)t, n, NULL, NULL);
    npzs_limits lim;
    npzs_limits_default(&lim);
    for (long at = 0; at < 8; at++) {
        fa a = {at, 0, 0};
        npzs_allocator al = {fa_alloc, fa_free, &a};
        npzs_parser *p = npzs_new(&lim, &al);
        if (!p) continue;
        int rc = npzs_policy_use(p, pol);
        if (rc) CHECK(rc == NPZS_E_NOMEM && !strcmp(npzs_error_rule(p), "NOMEM.policy"), "policy_use: %d %s", rc,
                      npzs_error_rule(p));
        npzs_free(p);
        CHECK(a.live == 0, "leak after npzs_policy_use");
    }
    npzs_policy_free(pol);
    free(t);
}

/* ---- the vectors that name a policy ------------------------------------------------------------- */

typedef struct mrow {
    char name[256], verdict[64], rule[128], args[256];
    uint64_t off;
} mrow;

static void vector_runs(const char *dir, const mrow *m, const npzs_policy *pol, int sha) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, m->name);
    size_t n;
    uint8_t *b = slurp(path, &n);
    CHECK(b != NULL, "cannot read %s", path);
    if (!b) return;
    fz_opts o;
    fz_opts_init(&o);
    o.policy = pol;
    o.hash = sha;
    fz_result whole;
    fz_run(b, n, &o, &whole);
    int ok = !strcmp(m->verdict, "ok") ? whole.accepted
                                        : !whole.accepted && !strcmp(npzs_error_name(whole.err), m->verdict) &&
                                              whole.err_off == m->off;
    CHECK(ok, "%s: %s@%" PRIu64 ", the manifest says %s@%" PRIu64, m->name,
          whole.accepted ? "ok" : npzs_error_name(whole.err), whole.err_off, m->verdict, m->off);
    /* schedules: a fixed one with 0- and 1-byte pushes, 1-byte pushes, every push size to 64 */
    static const uint8_t sched[] = {1, 0, 7, 2, 0xE0, 3, 1, 1, 64, 5};
    fz_result r;
    o.sched = sched;
    o.sched_n = sizeof sched;
    o.finish_null = 1;
    fz_run(b, n, &o, &r);
    CHECK(fz_same(&whole, &r), "%s: the split schedule gives other events", m->name);
    for (unsigned step = 1; step <= 64 && step <= n; step++) {
        uint8_t s1 = (uint8_t)step;
        o.sched = &s1;
        o.sched_n = 1;
        fz_run(b, n, &o, &r);
        if (!fz_same(&whole, &r)) {
            CHECK(0, "%s: pushes of %u bytes give other events", m->name, step);
            break;
        }
    }
    o.sched = NULL;
    o.sched_n = 0;
    /* the caller's destinations; MEMBER_END alone; the helper with two workers */
    o.into = 1;
    fz_run(b, n, &o, &r);
    CHECK(fz_same(&whole, &r), "%s: into destinations: other events", m->name);
    o.into = 0;
    o.mask = 0;
    o.mask_parser = 0;
    fz_opts om = o;
    om.mask = NPZS_EV_BIT(NPZS_EV_MEMBER_END);
    om.mask_parser = 1;
    fz_result wm, rm;
    fz_opts omw = om;
    omw.mask_parser = 0;
    fz_run(b, n, &omw, &wm);
    fz_run(b, n, &om, &rm);
    CHECK(fz_same(&wm, &rm), "%s: with MEMBER_END alone asked for, other events", m->name);
    fz_opts op = o;
    op.par = 1;
    op.par_threads = 2;
    op.par_held = UINT64_C(1) << 30;
    fz_run(b, n, &op, &r);
    CHECK(fz_same(&whole, &r), "%s: through the helper: other events", m->name);
    /* hashing never changes a verdict */
    if (!sha && npzs_sha256_built()) {
        fz_opts oh = o;
        oh.hash = 1;
        fz_run(b, n, &oh, &r);
        CHECK(r.accepted == whole.accepted && r.err == whole.err && r.err_off == whole.err_off,
              "%s: hashing changes the verdict", m->name);
    }
    /* without the policy: the same verdict, unless the policy's rejection came first */
    fz_opts ob = o;
    ob.policy = NULL;
    fz_run(b, n, &ob, &r);
    CHECK(whole.err == NPZS_E_POLICY || (r.accepted == whole.accepted && r.err == whole.err && r.err_off == whole.err_off),
          "%s: without its policy %s, with it %s", m->name, r.accepted ? "ok" : npzs_error_name(r.err),
          whole.accepted ? "ok" : npzs_error_name(whole.err));
    free(b);
}

static void test_vectors(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f) return;
    char line[1024];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strstr(line, "--policy ")) continue;
        line[strcspn(line, "\n")] = 0;
        char *col[6];
        int nc = 0;
        for (char *s = line; nc < 6 && s; nc++) {
            col[nc] = s;
            s = strchr(s, '\t');
            if (s) *s++ = 0;
        }
        if (nc < 6) { CHECK(0, "a malformed manifest line"); continue; }
        mrow m;
        memset(&m, 0, sizeof m);
        if ((size_t)snprintf(m.name, sizeof m.name, "%s", col[0]) >= sizeof m.name ||
            (size_t)snprintf(m.verdict, sizeof m.verdict, "%s", col[1]) >= sizeof m.verdict) {
            CHECK(0, "a manifest name or verdict too long");
            continue;
        }
        m.off = strcmp(col[2], "-") ? strtoull(col[2], NULL, 10) : 0;
        const char *pp = strstr(col[5], "--policy ") + 9;
        char ppath[512];
        snprintf(ppath, sizeof ppath, "%.*s", (int)strcspn(pp, " "), pp);
        size_t n;
        uint8_t *t = slurp(ppath, &n);
        npzs_policy_error e;
        npzs_policy *pol = t ? npzs_policy_new((const char *)t, n, NULL, &e) : NULL;
        free(t);
        CHECK(pol != NULL, "%s: policy %s", m.name, ppath);
        if (pol) vector_runs(dir, &m, pol, strstr(col[5], "--sha256") != NULL);
        npzs_policy_free(pol);
        rows++;
    }
    fclose(f);
    CHECK(rows >= 50, "only %d vectors name a policy", rows);
    printf("policy: %d vectors with a policy, each whole, split, masked, into destinations, through the helper\n", rows);
}

/* ---- the value checks against a reference --------------------------------------------------------- */

typedef struct vtype {
    const char *descr;
    unsigned w;
    char cls; /* 'f' float, 'i', 'u' */
    int big;
} vtype;

static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* the element at s as a double (floats) or its integer value */
static double ref_value(const vtype *t, const uint8_t *s, int64_t *iv, uint64_t *uv) {
    uint8_t b[8];
    for (unsigned i = 0; i < t->w; i++) b[i] = t->big ? s[t->w - 1 - i] : s[i];
    uint64_t x = 0;
    for (unsigned i = 0; i < t->w; i++) x |= (uint64_t)b[i] << (8 * i);
    *uv = x;
    unsigned sh = 64u - 8u * t->w;
    *iv = t->w == 8 ? (int64_t)x : (int64_t)(x << sh) >> sh;
    if (t->cls != 'f') return 0;
    if (t->w == 2) return half_to_double((uint16_t)x);
    if (t->w == 4) { float f; uint32_t u = (uint32_t)x; memcpy(&f, &u, 4); return f; }
    double d;
    memcpy(&d, &x, 8);
    return d;
}

static void put_elem(const vtype *t, uint8_t *s, double v, int64_t iv) {
    uint8_t b[8];
    if (t->cls == 'f') {
        if (t->w == 2) { /* exact halfs only: 0.5, 1, 2, inf, nan */
            uint16_t h = isnan(v) ? 0x7E00 : isinf(v) ? (v > 0 ? 0x7C00 : 0xFC00) : v == 0.5 ? 0x3800 : v == 1 ? 0x3C00 : 0x4000;
            b[0] = (uint8_t)h; b[1] = (uint8_t)(h >> 8);
        } else if (t->w == 4) { float f = (float)v; memcpy(b, &f, 4); }
        else memcpy(b, &v, 8);
    } else {
        for (unsigned i = 0; i < t->w; i++) b[i] = (uint8_t)((uint64_t)iv >> (8 * i));
    }
    for (unsigned i = 0; i < t->w; i++) s[t->big ? t->w - 1 - i : i] = b[i];
}

static void test_values(void) {
    static const vtype types[] = {{"<f2", 2, 'f', 0}, {">f2", 2, 'f', 1}, {"<f4", 4, 'f', 0}, {">f4", 4, 'f', 1},
                                  {"<f8", 8, 'f', 0}, {">f8", 8, 'f', 1}, {"|i1", 1, 'i', 0}, {"<i2", 2, 'i', 0},
                                  {">i4", 4, 'i', 1}, {"<i8", 8, 'i', 0}, {"|u1", 1, 'u', 0}, {">u2", 2, 'u', 1},
                                  {"<u4", 4, 'u', 0}, {">u8", 8, 'u', 1}};
    static const size_t positions[] = {0, 1, 15, 1023, 1024, 1025, 2047, 2048, 2999};
    const size_t count = 3000;
    size_t runs = 0;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const vtype *t = &types[ti];
        for (int kind = 0; kind < 3; kind++) { /* 0: NaN (finite), 1: inf (finite), 2: out of range */
            if (t->cls != 'f' && kind < 2) continue;
            char json[256];
            snprintf(json, sizeof json, "{\"array\": {\"dtype\": [\"%s\"], %s}}", t->descr,
                     kind < 2 ? "\"finite\": true" : "\"range\": [0, 1]");
            npzs_policy *pol = compile(json, NULL);
            CHECK(pol != NULL, "%s", json);
            for (size_t pi = 0; pol && pi < sizeof positions / sizeof positions[0]; pi++) {
                size_t at = positions[pi];
                char dict[160];
                snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }", t->descr, count);
                uint8_t *data = calloc(count, t->w);
                for (size_t k = 0; k < count; k++) put_elem(t, data + k * t->w, 0.5, 1);
                put_elem(t, data + at * t->w, kind == 0 ? NAN : kind == 1 ? -INFINITY : 2.0, kind == 2 ? 2 : 0);
                /* the reference: the first element that fails */
                size_t want = count;
                for (size_t k = 0; k < count && want == count; k++) {
                    int64_t iv;
                    uint64_t uv;
                    double v = ref_value(t, data + k * t->w, &iv, &uv);
                    int bad = t->cls == 'f' ? (kind < 2 ? !isfinite(v) : !(v >= 0 && v <= 1))
                                            : t->cls == 'i' ? (iv < 0 || iv > 1) : uv > 1;
                    if (bad) want = k;
                }
                fz_buf fb = {0};
                fz_npy(&fb, dict, data, count * t->w);
                size_t hl = fb.n - count * t->w;
                const char *rule = kind == 0 ? "POLICY.nan" : kind == 1 ? "POLICY.inf" : "POLICY.range";
                static const size_t steps[] = {0, 1, 3, 7, 1000, 4093};
                for (size_t si = 0; si < sizeof steps / sizeof steps[0]; si++) {
                    npzs_parser *p = npzs_new(NULL, NULL);
                    npzs_policy_use(p, pol);
                    size_t off = 0, step = steps[si] ? steps[si] : fb.n;
                    int rc = 0;
                    while (rc >= 0 && rc != NPZS_DONE) {
                        size_t k = fb.n - off < step ? fb.n - off : step;
                        npzs_in in = {fb.p + off, k, 0};
                        if (off + k == fb.n) npzs_finish(p);
                        npzs_event ev;
                        while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
                        }
                        off += in.pos;
                        if (rc == NPZS_NEED_INPUT && off == fb.n) break;
                    }
                    runs++;
                    CHECK(rc == NPZS_E_POLICY && npzs_error_offset(p) == hl + want * t->w && !strcmp(npzs_error_rule(p), rule),
                          "%s %s at %zu, pushes of %zu: %d at %" PRIu64 " %s, want %s at %zu", t->descr, rule, at, step, rc,
                          npzs_error_offset(p), npzs_error_rule(p) ? npzs_error_rule(p) : "-", rule, hl + want * t->w);
                    npzs_free(p);
                }
                fz_free_buf(&fb);
                free(data);
            }
            npzs_policy_free(pol);
        }
    }
    printf("policy: %zu value-check runs against the reference\n", runs);
}

/* ---- SHA-256 ---------------------------------------------------------------------------------------- */

static void hex(const uint8_t *d, char *out) {
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* the members' digests of an input, in order, "hex,hex,..." */
static int digests(const uint8_t *b, size_t n, size_t step, char *out, size_t cap) {
    npzs_parser *p = npzs_new(NULL, NULL);
    if (npzs_hash(p, NPZS_HASH_SHA256) != 0) { npzs_free(p); return -1; }
    size_t off = 0, k = 0;
    out[0] = 0;
    int rc = 0;
    for (;;) {
        size_t c = n - off < step ? n - off : step;
        npzs_in in = {b + off, c, 0};
        if (off + c == n) npzs_finish(p);
        npzs_event ev;
        while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
            if (ev.type == NPZS_EV_MEMBER_END && ev.sha256 && k + 66 < cap) {
                hex(ev.sha256, out + k);
                k += 64;
                out[k++] = ',';
                out[k] = 0;
            }
        }
        off += in.pos;
        if (rc != NPZS_NEED_INPUT || off == n) break;
    }
    npzs_free(p);
    return rc == NPZS_DONE ? 0 : -1;
}

/* Where SHA-256 cannot be had (a build without OpenSSL's headers, or libcrypto not loadable at
 * run time: src/sha256.c), hashing is refused, never skipped: npzs_hash fails with CALL.hash at
 * once, a policy that hashes or pins a value does not compile (the field named), and the parse
 * without a hash goes on as before. */
static void test_sha256_absent(void) {
    npzs_parser *p = npzs_new(NULL, NULL);
    CHECK(npzs_hash(p, NPZS_HASH_SHA256) == NPZS_E_BAD_CALL && !strcmp(npzs_error_rule(p), "CALL.hash") &&
              npzs_error_offset(p) == 0,
          "npzs_hash without SHA-256: %s at %" PRIu64, npzs_error_rule(p), npzs_error_offset(p));
    npzs_free(p);
    static const struct {
        const char *json;
        unsigned column;
        const char *path;
    } t[] = {{"{\"hash\": \"sha256\"}", 10, "hash"},
             {"{\"members\": {\"w\": {\"sha256\": \"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"}}}",
              30, "members.w.sha256"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        npzs_policy_error e;
        npzs_policy *pol = compile(t[i].json, &e);
        CHECK(!pol && e.line == 1 && e.column == t[i].column && !strcmp(e.path, t[i].path) &&
                  strstr(e.message, "has no SHA-256"),
              "a policy that hashes, without SHA-256 (%s): %u:%u '%s': %s", t[i].json, e.line, e.column, e.path,
              e.message);
        npzs_policy_free(pol);
    }
    npzs_policy *pol = compile("{\"hash\": null}", NULL);
    CHECK(pol != NULL, "a policy that does not hash compiles without SHA-256");
    p = npzs_new(NULL, NULL);
    CHECK(p && npzs_policy_use(p, pol) == 0, "and is used");
    npzs_free(p);
    npzs_policy_free(pol);
    printf("policy: no SHA-256 here: npzs_hash and hashing policies refused (checked)\n");
}

static void test_sha256(void) {
    if (!npzs_sha256_built()) {
        test_sha256_absent();
        return;
    }
    /* FIPS 180-2's "abc" and the empty string, as blobs of an archive */
    fz_member m[2] = {{"abc", (const uint8_t *)"abc", 3, 0, 0, 0, 0, 0}, {"empty", (const uint8_t *)"", 0, 8, 1, 0, 0, 0}};
    fz_buf z = {0};
    for (int i = 0; i < 2; i++) fz_zip_member(&z, &m[i]);
    size_t cd = z.n;
    for (int i = 0; i < 2; i++) fz_zip_cdh(&z, &m[i]);
    fz_zip_eocd(&z, 2, (uint32_t)(z.n - cd), (uint32_t)cd);
    char got[300];
    CHECK(digests(z.p, z.n, z.n, got, sizeof got) == 0 &&
              !strcmp(got, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad,"
                           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855,"),
          "known digests: %s", got);
    fz_free_buf(&z);
    /* an array of 300 KiB: the same digest stored, deflated, written to a pipe, at any push size */
    size_t dn = 300 * 1024;
    uint8_t *data = malloc(dn);
    for (size_t i = 0; i < dn; i++) data[i] = (uint8_t)(i * 2654435761u >> 13);
    fz_buf a = {0};
    fz_npy(&a, "{'descr': '|u1', 'fortran_order': False, 'shape': (307200,), }", data, dn);
    char ref[300] = "";
    CHECK(digests(a.p, a.n, a.n, ref, sizeof ref) == 0, "the .npy");
    for (int method = 0; method <= 8; method += 8)
        for (int dd = 0; dd <= 1; dd++) {
            fz_member w = {"w.npy", a.p, a.n, method, dd, 0, 0, 0};
            fz_buf zz = {0};
            fz_zip_member(&zz, &w);
            size_t c0 = zz.n;
            fz_zip_cdh(&zz, &w);
            fz_zip_eocd(&zz, 1, (uint32_t)(zz.n - c0), (uint32_t)c0);
            static const size_t steps[] = {1 << 20, 1, 4093, 65536};
            for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
                if (steps[s] == 1 && method) continue; /* slow and covered by the vectors */
                char d2[300];
                CHECK(digests(zz.p, zz.n, steps[s], d2, sizeof d2) == 0 && !strcmp(d2, ref),
                      "method %d, descriptor %d, pushes of %zu: %s, the .npy %s", method, dd, steps[s], d2, ref);
            }
            fz_free_buf(&zz);
        }
    fz_free_buf(&a);
    free(data);
    /* after the first byte, an unknown bit: CALL.hash; 0 turns it off */
    npzs_parser *p = npzs_new(NULL, NULL);
    CHECK(npzs_hash(p, 0) == 0 && npzs_hash(p, 2) == NPZS_E_BAD_CALL && !strcmp(npzs_error_rule(p), "CALL.hash"),
          "an unknown hash bit");
    npzs_free(p);
    p = npzs_new(NULL, NULL);
    npzs_in in = {"\x93", 1, 0};
    npzs_event ev;
    npzs_next(p, &in, &ev);
    CHECK(npzs_hash(p, NPZS_HASH_SHA256) == NPZS_E_BAD_CALL && npzs_error(p) == NPZS_E_BAD_CALL, "npzs_hash after the first byte");
    npzs_free(p);
}

/* ---- sniffing ------------------------------------------------------------------------------------- */

static void test_sniff(void) {
    static const struct { const char *bytes; size_t n; const char *kind; } t[] = {
        {"", 0, "empty"},
        {"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01.", 14, "pickle"},
        {"\x80\x02]q\x00.", 6, "pickle"},
        {"(lp0\nI1\naI2\na.", 14, "pickle"},
        {"(dp0\nS'a'\np1\nI1\ns.", 19, "pickle"},
        {"cos\nsystem\n(S'id'\ntR.", 21, "pickle"},
        {"]q\x00(K\x01K\x02" "e.", 11, "pickle"},
        {"}.", 2, "pickle"},
        {"PK\x03\x04\x14\x00", 6, "zip"},
        {"\x1f\x8b" "\x08\x00", 4, "gzip"},
        {"hello, world\n", 13, "text"},
        {"caf\xc3\xa9 au lait, more than sixteen bytes", 37, "text"},
        {"0123456789abcd\xc3\xa9", 16, "text"},       /* a character ends the window */
        {"0123456789abcde\xc3\xa9xyz", 19, "text"},   /* a character cut by the window's end */
        {"0123456789abcd\xc3", 15, "binary"},         /* ... but not by the blob's end */
        {"(Introduction)", 14, "text"},
        {"\x00\x01\x02", 3, "binary"},
        {"\x93NUMPZ", 6, "binary"},
        {"\x93NU", 3, "binary"},
        {"text\x07" "bell", 9, "binary"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        fz_member m = {"blob", (const uint8_t *)t[i].bytes, t[i].n, 0, 0, 0, 0, 0};
        fz_buf z = {0};
        fz_zip_member(&z, &m);
        size_t cd = z.n;
        fz_zip_cdh(&z, &m);
        fz_zip_eocd(&z, 1, (uint32_t)(z.n - cd), (uint32_t)cd);
        for (size_t step = 1; step <= z.n; step += step < 40 ? 1 : z.n) {
            npzs_parser *p = npzs_new(NULL, NULL);
            const char *got = NULL;
            size_t off = 0;
            int rc;
            for (;;) {
                size_t c = z.n - off < step ? z.n - off : step;
                npzs_in in = {z.p + off, c, 0};
                if (off + c == z.n) npzs_finish(p);
                npzs_event ev;
                while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT)
                    if (ev.type == NPZS_EV_MEMBER_END) got = npzs_sniff_name(ev.sniff);
                off += in.pos;
                if (rc != NPZS_NEED_INPUT || off == z.n) break;
            }
            CHECK(rc == NPZS_DONE && got && !strcmp(got, t[i].kind), "sniff %zu at pushes of %zu: %s, want %s", i, step,
                  got ? got : "-", t[i].kind);
            npzs_free(p);
        }
        fz_free_buf(&z);
    }
    CHECK(!strcmp(npzs_sniff_name(NPZS_SNIFF_NPY), "npy") && !strcmp(npzs_sniff_name(99), "unknown"), "sniff names");
}

/* ---- the API ---------------------------------------------------------------------------------------- */

typedef struct shared {
    const npzs_policy *pol;
    const uint8_t *b;
    size_t n;
    int bad;
} shared;

static void *share_thread(void *arg) {
    shared *s = arg;
    for (int i = 0; i < 200; i++) {
        npzs_parser *p = npzs_new(NULL, NULL);
        npzs_policy_use(p, s->pol);
        npzs_in in = {s->b, s->n, 0};
        npzs_event ev;
        npzs_finish(p);
        int rc;
        while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
        }
        if (rc != NPZS_E_POLICY) s->bad++;
        npzs_free(p);
    }
    return NULL;
}

static void test_api(void) {
    npzs_policy *pol = compile("{\"array\": {\"shape\": [3]}}", NULL);
    fz_buf a = {0};
    fz_npy(&a, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", (const uint8_t *)"\1\0\0\0\2\0\0\0", 8);
    /* npzs_policy_use after the first byte: CALL.policy; NULL detaches */
    npzs_parser *p = npzs_new(NULL, NULL);
    npzs_in in = {a.p, 1, 0};
    npzs_event ev;
    CHECK(npzs_next(p, &in, &ev) == NPZS_EVENT, "first byte");
    CHECK(npzs_policy_use(p, pol) == NPZS_E_BAD_CALL && !strcmp(npzs_error_rule(p), "CALL.policy"), "late policy");
    npzs_free(p);
    CHECK(npzs_policy_use(NULL, pol) == NPZS_E_BAD_CALL, "NULL parser");
    p = npzs_new(NULL, NULL);
    CHECK(npzs_policy_use(p, pol) == 0 && npzs_policy_use(p, NULL) == 0, "detach");
    in = (npzs_in){a.p, a.n, 0};
    npzs_finish(p);
    int rc;
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
    }
    CHECK(rc == NPZS_DONE, "no policy after detaching: %d", rc);
    /* a reset keeps the policy (and its state is new) */
    npzs_reset(p);
    CHECK(npzs_policy_use(p, pol) == 0, "policy after reset");
    for (int round = 0; round < 2; round++) {
        in = (npzs_in){a.p, a.n, 0};
        npzs_finish(p);
        while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
        }
        CHECK(rc == NPZS_E_POLICY && !strcmp(npzs_error_rule(p), "POLICY.shape") && npzs_error_detail(p) &&
                  strstr(npzs_error_detail(p), "has 2 in dimension 0"),
              "round %d: %d %s", round, rc, npzs_error_detail(p) ? npzs_error_detail(p) : "-");
        CHECK(npzs_error_hint(p) && strstr(npzs_error_hint(p), "policy"), "the hint");
        npzs_reset(p);
        CHECK(npzs_error_detail(p) == NULL, "a reset forgets the detail");
    }
    npzs_free(p);
    /* one policy, two threads */
    shared s[2] = {{pol, a.p, a.n, 0}, {pol, a.p, a.n, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, share_thread, &s[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK(s[0].bad == 0 && s[1].bad == 0, "a shared policy on two threads");
    /* the event layout of 0.4.0 (up to sniff) is still filled */
    p = npzs_new(NULL, NULL);
    in = (npzs_in){a.p, a.n, 0};
    npzs_finish(p);
    unsigned char old[sizeof(npzs_event)];
    memset(old, 0xAB, sizeof old);
    size_t old_size = offsetof(npzs_event, sniff);
    int events = 0;
    while ((rc = npzs_next_(p, &in, (npzs_event *)(void *)old, old_size)) == NPZS_EVENT) events++;
    CHECK(rc == NPZS_DONE && events == 5 && old[old_size] == 0xAB, "the 0.4.0 layout: %d, %d events", rc, events);
    CHECK(npzs_next_(p, &in, (npzs_event *)(void *)old, old_size + 1) == NPZS_E_BAD_CALL, "another size");
    npzs_free(p);
    /* the rules and hints */
    size_t nr = npzs_rule_count(), with_hint = 0;
    for (size_t i = 0; i < nr; i++) with_hint += npzs_rule_hint(npzs_rule_id(i)) != NULL;
    CHECK(nr > 200 && npzs_rule_id(nr) == NULL && with_hint == nr, "%zu rules, %zu with a hint", nr, with_hint);
    CHECK(npzs_rule_hint("LIMIT.max_total_bytes.array") && strstr(npzs_rule_hint("LIMIT.max_total_bytes.array"), "--max-total-bytes"),
          "the limit's hint names the flag");
    CHECK(npzs_rule_hint("NOPE") == NULL, "an unknown rule has no hint");
    fz_free_buf(&a);
    npzs_policy_free(pol);
}

int main(int argc, char **argv) {
    const char *dir = "tests/vectors";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--vectors") && i + 1 < argc) {
            dir = argv[++i];
        } else if (!strcmp(argv[i], "--sha256-absent")) { /* a library that cannot load libcrypto */
            CHECK(!npzs_sha256_built(), "npzs_sha256_built() says 1 where libcrypto cannot be loaded");
            test_sha256_absent();
            printf("policy: %d passed, %d failed\n", passed, failed);
            return failed ? 1 : 0;
        } else {
            fprintf(stderr, "usage: test_policy [--vectors DIR] [--sha256-absent]\n");
            return 2;
        }
    }
    test_compile_faults();
    test_shipped(dir);
    test_alloc_failures();
    test_api();
    test_sniff();
    test_sha256();
    test_values();
    test_vectors(dir);
    printf("policy: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
